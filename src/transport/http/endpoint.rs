//! The MCP endpoint handler: HTTP checks in ladder order, then dispatch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::{Body, HttpBody as _};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::Method;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::guard::{self, AllowList};
use super::limits::in_flight::InFlightLimit;
use super::limits::rate::{self, RateGate};
use super::rejection::{
    BodyTimeout, BodyUnreadable, ForbiddenOrigin, MethodNotAllowed, PayloadTooLarge,
};
use super::{headers, legacy, negotiate, reply};
use crate::observability::metrics::{self, Refusal, RequestOutcome};
use crate::observability::{RequestObserver, RequestProbe, traceparent_header};
use crate::server::{Era, MirroredHeaders, Outcome, Reply, Running, Server, classify};

/// Everything the endpoint needs, shared by all requests.
pub(crate) struct Endpoint {
    pub(crate) server: Server,
    pub(crate) body_limit: usize,
    pub(crate) hosts: AllowList,
    pub(crate) origins: AllowList,
    pub(crate) keep_alive: Duration,
    /// Opens each request's span and metrics.
    pub(crate) observer: RequestObserver,
    /// Cancelled when the server stops accepting connections: long-lived streams
    /// (`subscriptions/listen`) must end on it so the process can drain.
    pub(crate) shutdown: CancellationToken,
    /// Whether the task that closes listen streams on `shutdown` runs already.
    pub(crate) watching_shutdown: AtomicBool,
    /// How long the body may take to arrive.
    pub(crate) body_timeout: Duration,
    /// The bound on requests answered at once, if any.
    pub(crate) in_flight: Option<InFlightLimit>,
    /// The rate limit per caller, if any.
    pub(crate) rate: Option<RateGate>,
}

impl Endpoint {
    /// Starts, once, the task that closes every listen stream gracefully when `shutdown` is
    /// cancelled (listen streams never end on their own, so a graceful stop would wait).
    pub(crate) fn close_listen_streams_on_shutdown(&self) {
        if self.watching_shutdown.swap(true, Ordering::AcqRel) {
            return;
        }
        let (server, shutdown) = (self.server.clone(), self.shutdown.clone());
        tokio::spawn(async move {
            shutdown.cancelled().await;
            server.close_listen_streams();
        });
    }
}

/// The outcome label of a final reply.
fn outcome_of(reply: &Reply) -> RequestOutcome {
    reply
        .error_code
        .map_or(RequestOutcome::Ok, RequestOutcome::Error)
}

fn too_large(limit: usize) -> Response {
    PayloadTooLarge(format!("Request body exceeds the limit of {limit} bytes")).into_response()
}

async fn read_body(body: Body, limit: usize, timeout: Duration) -> Result<Bytes, Response> {
    // At least the declared `Content-Length` (the server parsed it already).
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large(limit));
    }
    let Ok(read) = tokio::time::timeout(timeout, Limited::new(body, limit).collect()).await else {
        metrics::record_refusal(Refusal::BodyTimeout);
        return Err(BodyTimeout(format!(
            "The request body did not arrive within {} s",
            timeout.as_secs_f32()
        ))
        .into_response());
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large(limit)),
        Err(e) => {
            Err(BodyUnreadable(format!("Could not read the request body: {e}")).into_response())
        }
    }
}

/// The endpoint: the in-flight bound and the rate limit first (before the body is read),
/// then the observed request; the response body holds the in-flight slot.
pub(crate) async fn handle(State(ep): State<Arc<Endpoint>>, request: Request) -> Response {
    let slot = match ep.in_flight.as_ref().map(|l| l.admit(&request)) {
        None => None,
        Some(Ok(slot)) => slot,
        Some(Err(busy)) => return busy.into_response(),
    };
    if let Some(Err(wait)) = ep.rate.as_ref().map(|r| r.admit(&request)) {
        return rate::refuse(request, wait).await;
    }
    InFlightLimit::hold(observed(&ep, request).await, slot)
}

/// Observes the request (span, metrics) around [`process`], labelled from its mirrored
/// `Mcp-Method` and `Mcp-Name` headers (read once, for the labels and for dispatch).
async fn observed(ep: &Endpoint, request: Request) -> Response {
    let mirror = headers::mirrored(request.headers());
    let mut probe = ep
        .observer
        .start_labelled(mirror.method.value(), mirror.name.value());
    let span = probe.span().clone();
    let response = process(ep, request, mirror, &mut probe)
        .instrument(span)
        .await;
    // Only an HTTP rejection is still unrecorded here.
    probe.finish(RequestOutcome::Rejected(response.status().as_u16()));
    response
}

/// `Host`/`Origin` → 403, method → 405, `Accept` → 406, `Content-Type` → 415, size → 413,
/// then the JSON-RPC ladder in [`Server::handle`].
async fn process(
    ep: &Endpoint,
    request: Request,
    mirror: MirroredHeaders,
    probe: &mut RequestProbe,
) -> Response {
    let (parts, body) = request.into_parts();
    let authority = parts.uri.authority().map(|a| a.as_str());
    if let Err(why) = guard::check(&parts.headers, authority, &ep.hosts, &ep.origins) {
        tracing::debug!(%why, "refused by the Host/Origin allowlist");
        return ForbiddenOrigin(format!("Forbidden: {why}")).into_response();
    }
    let legacy = ep.server.legacy_enabled();
    let session = if legacy {
        match legacy::session_id(&parts.headers) {
            Ok(s) => s,
            Err(why) => return legacy::bad_session(&why),
        }
    } else {
        None
    };
    if parts.method != Method::POST {
        return match (session, &parts.method) {
            (Some(s), &Method::GET) => legacy::stream(ep, &parts, s, probe).await,
            (Some(s), &Method::DELETE) => legacy::end(ep, &parts, s, probe).await,
            _ => MethodNotAllowed.into_response(),
        };
    }
    let accepts = match negotiate::accepts(&parts.headers) {
        Ok(a) => a,
        Err(r) => return r.into_response(),
    };
    if let Err(r) = negotiate::content_type(&parts.headers) {
        return r.into_response();
    }
    let bytes = match read_body(body, ep.body_limit, ep.body_timeout).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut extensions = parts.extensions;
    if let Some(tp) = traceparent_header(&parts.headers) {
        extensions.insert(tp);
    }
    if legacy && classify(&mirror.protocol_version, session.is_some(), &bytes) == Era::Legacy {
        let out = ep
            .server
            .handle_legacy(&bytes, session.as_deref(), extensions)
            .await;
        return legacy::respond(out, accepts, ep.keep_alive, probe).await;
    }
    let outcome = match ep.server.handle(&bytes, Some(&mirror), extensions) {
        Outcome::Accepted => {
            probe.finish(RequestOutcome::Accepted);
            Outcome::Accepted
        }
        Outcome::Ready(reply) => {
            probe.finish(outcome_of(&reply));
            Outcome::Ready(reply)
        }
        Outcome::Running(Running { reply, events }) if events.is_none() || !accepts.sse => {
            // No stream can come of it: the reply is awaited right here (the probe records
            // `cancelled` if the client leaves first). Notifications the client cannot take
            // are dropped, not queued.
            drop(events);
            let reply = reply.await;
            probe.finish(outcome_of(&reply));
            return reply::json(reply);
        }
        Outcome::Running(mut running) => {
            running.reply = Box::pin(probe.track(running.reply, |r: &Reply| r.error_code));
            Outcome::Running(running)
        }
        Outcome::Listen(listen) => {
            ep.close_listen_streams_on_shutdown();
            probe.finish(RequestOutcome::Ok);
            Outcome::Listen(listen)
        }
    };
    reply::respond(outcome, accepts, ep.keep_alive).await
}

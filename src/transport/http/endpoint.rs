//! The MCP endpoint handler: HTTP checks in ladder order, then dispatch.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::Duration;

use axum::body::{Body, HttpBody as _};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::request::Parts;
use http::{Extensions, Method};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use tokio_util::sync::CancellationToken;

use super::guard::{self, AllowList};
use super::limits::in_flight::{InFlightLimit, Slot};
use super::limits::rate::{self, RateGate};
use super::rejection::{
    BodyTimeout, BodyUnreadable, ForbiddenOrigin, MethodNotAllowed, PayloadTooLarge,
};
use super::request_headers::RequestHeaders;
use super::{negotiate, reply};
use crate::legacy::classify::{Era, classify, says_legacy};
use crate::legacy::{HttpRequest as LegacyRequest, Legacy};

use crate::observability::metrics::{self, Refusal};
use crate::observability::traceparent_header;
use crate::server::idempotency::IdempotencyHeader;
use crate::server::{Outcome, Running, Server};

/// Everything the endpoint needs, shared by all requests.
pub(crate) struct Endpoint {
    pub(crate) server: Server,
    /// The 2025-11-25 wing, when the server serves legacy clients.
    pub(crate) legacy: Option<Legacy>,
    pub(crate) body_limit: usize,
    pub(crate) hosts: AllowList,
    pub(crate) origins: AllowList,
    pub(crate) keep_alive: Duration,
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

fn too_large(limit: usize) -> Response {
    PayloadTooLarge(format!("Request body exceeds the limit of {limit} bytes")).into_response()
}

/// The body, at most `limit` bytes, arrived within `timeout` (counted from the first poll).
///
/// The size limit is http-body-util's `Limited` (what tower-http's `RequestBodyLimit` wraps
/// bodies in) and the time limit tokio's `timeout`; they are not tower-http's layers
/// because those answer for the endpoint: `RequestBodyLimit` with a `text/plain` 413 of its
/// own, where MCP clients get a JSON-RPC error, counted in `mcp_http_refusals_total`; and
/// `RequestBodyTimeout` times each frame, so a body trickling in a byte at a time would
/// never be cut off.
async fn read_body(body: Body, limit: usize, timeout: Duration) -> Result<Bytes, Response> {
    // At least the declared `Content-Length` (the server parsed it already).
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large(limit));
    }
    let mut collect = Limited::new(body, limit).collect();
    // A small body has usually arrived with the request head: polled once, it needs no
    // timer (arming one costs the timer wheel a registration and a removal per request).
    // The timed wait is boxed: inline, its timer and a second copy of the collection would
    // sit in every request's future, which is copied on its way into hyper.
    let read = match std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut collect).poll(cx))).await {
        Poll::Ready(read) => read,
        Poll::Pending => match Box::pin(tokio::time::timeout(timeout, collect)).await {
            Ok(read) => read,
            Err(_) => {
                metrics::record_refusal(Refusal::BodyTimeout);
                return Err(BodyTimeout(format!(
                    "The request body did not arrive within {} s",
                    timeout.as_secs_f32()
                ))
                .into_response());
            }
        },
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large(limit)),
        Err(e) => {
            Err(BodyUnreadable(format!("Could not read the request body: {e}")).into_response())
        }
    }
}

/// The endpoint: the headers read in one pass, the in-flight bound and the rate limit
/// first (before the body is read), then the request; the response body holds the
/// in-flight slot.
///
/// Not an `async fn`: one would keep the request it was given for as long as it runs, beside
/// the parts taken from it; the future is copied on its way into hyper.
pub(crate) fn handle(
    State(ep): State<Arc<Endpoint>>,
    request: Request,
) -> impl Future<Output = Response> + Send + 'static {
    let (mut parts, body) = request.into_parts();
    let extensions = std::mem::take(&mut parts.extensions);
    async move {
        let (ep, parts) = (&*ep, &parts);
        let headers = RequestHeaders::read(&parts.headers);
        let mut slot = match ep
            .in_flight
            .as_ref()
            .map(|l| l.admit(&parts.method, headers.method))
        {
            None => None,
            Some(Ok(slot)) => slot,
            Some(Err(busy)) => return busy.into_response(),
        };
        let mut rate_headers = None;
        if let Some(gate) = &ep.rate {
            let admitted = if gate.is_shared() {
                Box::pin(gate.admit(&parts.headers, &extensions)).await
            } else {
                gate.admit_now(&parts.headers, &extensions)
            };
            match admitted {
                Ok(h) => rate_headers = h,
                Err(over) => return Box::pin(rate::refuse(body, over.wait, over.headers)).await,
            }
        }
        // A request refused before dispatch is recorded here, labelled from its mirrored
        // `Mcp-Method` and `Mcp-Name` headers (dispatch observes the rest; see
        // [`Server::handle`]).
        let mut response = match process(ep, parts, &headers, extensions, body, &mut slot).await {
            Ok(response) => response,
            Err(refused) => {
                ep.server
                    .record_rejection(&headers.mirror, refused.status().as_u16());
                refused
            }
        };
        if let Some(h) = rate_headers {
            h.apply(response.headers_mut());
        }
        InFlightLimit::hold(response, slot)
    }
}

/// `Host`/`Origin` → 403, method → 405, `Accept` → 406, `Content-Type` → 415, size → 413
/// (`Err`: refused before dispatch), then the JSON-RPC ladder in [`Server::handle`]. A JSON
/// reply's body takes the in-flight `slot` itself; any other response leaves it to the caller.
async fn process(
    ep: &Endpoint,
    parts: &Parts,
    headers: &RequestHeaders<'_>,
    mut extensions: Extensions,
    body: Body,
    slot: &mut Option<Slot>,
) -> Result<Response, Response> {
    let mirror = &headers.mirror;
    let authority = parts.uri.authority().map(|a| a.as_str());
    let (host, origin) = (headers.host.first(), headers.origin.first());
    if let Err(why) = guard::check(host, origin, authority, &ep.hosts, &ep.origins) {
        tracing::debug!(%why, "refused by the Host/Origin allowlist");
        return Err(ForbiddenOrigin(format!("Forbidden: {why}")).into_response());
    }
    let legacy = ep.legacy.as_ref();
    let session = match legacy {
        Some(wing) => wing
            .session_header(headers.session_id)
            .map_err(IntoResponse::into_response)?,
        None => None,
    };
    if parts.method != Method::POST {
        // A legacy session's GET and DELETE (boxed: inline, their futures would make every
        // request's future larger, and it is moved on its way into hyper).
        // Without a session: 405, or 400 to a request that says it speaks 2025-11-25.
        let (Some(legacy), Some(session)) = (legacy, session) else {
            return Err(match legacy {
                Some(wing) if says_legacy(&mirror.protocol_version) => wing.no_session(),
                _ => MethodNotAllowed.into_response(),
            });
        };
        let request = LegacyRequest {
            mirror,
            session: Some(session),
            extensions,
            keep_alive: ep.keep_alive,
        };
        return Ok(match parts.method {
            Method::GET => {
                ep.close_listen_streams_on_shutdown();
                let accept = (&parts.headers, headers.accept);
                Box::pin(legacy.get(request, accept)).await
            }
            Method::DELETE => Box::pin(legacy.delete(request)).await,
            _ => return Err(MethodNotAllowed.into_response()),
        });
    }
    let accepts =
        negotiate::accepts(headers.accept, &parts.headers).map_err(IntoResponse::into_response)?;
    negotiate::content_type(headers.content_type.first()).map_err(IntoResponse::into_response)?;
    let bytes = read_body(body, ep.body_limit, ep.body_timeout).await?;
    if let Some(tp) = traceparent_header(headers.traceparent.first()) {
        extensions.insert(tp);
    }
    if let Some(key) = headers.idempotency_key.first() {
        extensions.insert(IdempotencyHeader(key.clone()));
    }
    if let Some(legacy) = legacy
        .filter(|_| classify(&mirror.protocol_version, session.is_some(), &bytes) == Era::Legacy)
    {
        let request = LegacyRequest {
            mirror,
            session,
            extensions,
            keep_alive: ep.keep_alive,
        };
        return Ok(Box::pin(legacy.post(request, &bytes, accepts)).await);
    }
    let outcome = match ep.server.handle(&bytes, Some(mirror), extensions) {
        Outcome::Running(Running { reply, events }) if events.is_none() || !accepts.sse => {
            // No stream can come of it: the reply is awaited right here. Notifications the
            // client cannot take are dropped, not queued.
            drop(events);
            return Ok(reply::json_holding(reply.await, slot.take()));
        }
        Outcome::Ready(reply) => return Ok(reply::json_holding(reply, slot.take())),
        Outcome::Listen(listen) => {
            ep.close_listen_streams_on_shutdown();
            Outcome::Listen(listen)
        }
        other => other,
    };
    // Boxed, as the legacy branches: streams are the rare case.
    Ok(Box::pin(reply::respond(outcome, accepts, ep.keep_alive)).await)
}

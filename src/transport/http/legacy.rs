//! The HTTP side of legacy (2025-11-25) sessions on the same endpoint: `Mcp-Session-Id` in
//! and out, GET (the session's SSE stream), DELETE (end the session), and the responses of
//! the legacy POST path, which send JSON-RPC errors with HTTP 200 unless the session was
//! refused (400 missing, 404 unknown).

use std::time::Duration;

use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use http::{Extensions, HeaderMap, HeaderName, HeaderValue, StatusCode};

use super::endpoint::Endpoint;
use super::negotiate::{self, Accepts};
use super::rejection::{BodyUnreadable, NotAcceptable};
use super::reply;
use crate::mirrored::Found;
use crate::observability::RequestProbe;
use crate::observability::metrics::RequestOutcome;
use crate::server::{LegacyOutcome, Outcome, Reply};

/// `Mcp-Session-Id`.
pub const SESSION_ID: &str = "mcp-session-id";
const SESSION_ID_HEADER: HeaderName = HeaderName::from_static(SESSION_ID);

/// The request's `Mcp-Session-Id` (`found` by the endpoint's pass over its headers):
/// `Ok(None)` when absent, `Err` (why it is unusable, for [`bad_session`]) when empty,
/// repeated or not visible ASCII.
pub(crate) fn session_id(found: Found<'_>) -> Result<Option<&str>, &'static str> {
    match found.text() {
        Ok(Some("")) => Err("it is empty"),
        read => read,
    }
}

/// 400 for an unusable `Mcp-Session-Id`.
pub(crate) fn bad_session(why: &str) -> Response {
    BodyUnreadable(format!("Bad Request: invalid Mcp-Session-Id header: {why}")).into_response()
}

/// A ready legacy reply, with the status it goes with and the session id to return.
fn ready(out: &LegacyOutcome, reply: Reply) -> Response {
    let status = out.http_status(&reply);
    let mut response = reply::json(reply);
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    response
}

fn with_session(mut response: Response, session: Option<String>) -> Response {
    if let Some(id) = session.and_then(|s| HeaderValue::from_str(&s).ok()) {
        response.headers_mut().insert(SESSION_ID_HEADER, id);
    }
    response
}

/// The response to a legacy POST.
pub(crate) async fn respond(
    mut out: LegacyOutcome,
    accepts: Accepts,
    keep_alive: Duration,
    probe: &mut RequestProbe,
) -> Response {
    let session = out.session_id.take();
    let outcome = std::mem::replace(&mut out.outcome, Outcome::Accepted);
    let response = match outcome {
        Outcome::Accepted => {
            probe.finish(RequestOutcome::Accepted);
            StatusCode::ACCEPTED.into_response()
        }
        Outcome::Ready(reply) => {
            let status = out.http_status(&reply);
            probe.finish(match reply.error_code {
                Some(code) if status == 200 => RequestOutcome::Error(code),
                Some(_) => RequestOutcome::Rejected(status),
                None => RequestOutcome::Ok,
            });
            ready(&out, reply)
        }
        Outcome::Running(mut running) => {
            running.reply = Box::pin(probe.track(running.reply, |r: &Reply| r.error_code));
            reply::respond(Outcome::Running(running), accepts, keep_alive).await
        }
        other => reply::respond(other, accepts, keep_alive).await,
    };
    with_session(response, session)
}

/// GET with a session: the session's SSE stream.
pub(crate) async fn stream(
    ep: &Endpoint,
    (headers, accept): (&HeaderMap, Found<'_>),
    extensions: &Extensions,
    session: &str,
    probe: &mut RequestProbe,
) -> Response {
    if !negotiate::allows_event_stream(accept, headers) {
        return NotAcceptable(
            "Not Acceptable: a session's GET stream is a text/event-stream; Accept must allow it"
                .into(),
        )
        .into_response();
    }
    match ep
        .server
        .open_legacy_stream(Some(session), extensions)
        .await
    {
        Ok(listen) => {
            ep.close_listen_streams_on_shutdown();
            probe.finish(RequestOutcome::Ok);
            reply::sse_response(listen.messages.map(reply::event), ep.keep_alive)
        }
        Err(refused) => refusal(refused, probe),
    }
}

/// DELETE with a session: the session ends on every replica.
pub(crate) async fn end(
    ep: &Endpoint,
    extensions: &Extensions,
    session: &str,
    probe: &mut RequestProbe,
) -> Response {
    match ep
        .server
        .end_legacy_session(Some(session), extensions)
        .await
    {
        Ok(()) => {
            probe.finish(RequestOutcome::Ok);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(refused) => refusal(refused, probe),
    }
}

fn refusal(mut out: LegacyOutcome, probe: &mut RequestProbe) -> Response {
    match std::mem::replace(&mut out.outcome, Outcome::Accepted) {
        Outcome::Ready(reply) => {
            let response = ready(&out, reply);
            probe.finish(RequestOutcome::Rejected(response.status().as_u16()));
            response
        }
        _ => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

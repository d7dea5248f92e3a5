//! The HTTP side of legacy (2025-11-25) sessions on the same endpoint: `Mcp-Session-Id` in
//! and out, GET (the session's SSE stream), DELETE (end the session), and the responses of
//! the legacy POST path, which send JSON-RPC errors with HTTP 200 unless the request was
//! refused: the only place where a [`Refusal`] becomes a status.
//!
//! Each exchange is observed by the core ([`Server::observe`](crate::server::Server)), as
//! every request is; what it records is the [`Exchange`] as HTTP answers it.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::stream::BoxStream;

use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};

use super::endpoints::Opened;
use super::kept::names_get_stream;
use super::resume::sse_after;
use super::session::Refused;
use super::{HttpRequest, Legacy, LegacyOutcome, Refusal};
use crate::mirrored::Found;
use crate::observability::RequestProbe;
use crate::observability::metrics::RequestOutcome;
use crate::protocol::ErrorObject;
use crate::server::{Labels, Listen, Observed, Outcome, Reply};
use crate::transport::http::SESSION_ID;
use crate::transport::http::negotiate::{self, Accepts};
use crate::transport::http::rejection::{BodyUnreadable, NotAcceptable};
use crate::transport::http::reply;

const SESSION_ID_HEADER: HeaderName = HeaderName::from_static(SESSION_ID);
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// An unusable `Mcp-Session-Id` (empty, repeated or not visible ASCII), answered 400.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BadSession(&'static str);

impl IntoResponse for BadSession {
    fn into_response(self) -> Response {
        let why = self.0;
        BodyUnreadable(format!("Bad Request: invalid Mcp-Session-Id header: {why}")).into_response()
    }
}

/// The HTTP status of a refusal.
fn refusal_status(why: Refusal) -> u16 {
    match why {
        Refusal::Malformed | Refusal::Missing => 400,
        Refusal::Unknown => 404,
        Refusal::Unavailable => 503,
        Refusal::TooLarge => 413,
    }
}

/// The HTTP status a ready legacy reply goes with.
fn status(refusal: Option<Refusal>, reply: &Reply) -> u16 {
    match refusal {
        Some(why) => refusal_status(why),
        None => match reply.error_code {
            Some(-32700 | -32600) => 400,
            _ if reply.retry_after_secs.is_some() => 503,
            _ => 200,
        },
    }
}

/// A legacy exchange as HTTP answers it.
enum Exchange {
    /// What the POST path made of a message.
    Post(LegacyOutcome),
    /// A session's GET stream, opened.
    Stream(Listen),
    /// Events with ids: a POST stream resumed by a GET with `Last-Event-ID`, or a kept GET
    /// stream (after its priming event when it is new).
    Resumed(Option<Bytes>, BoxStream<'static, Result<Event, Infallible>>),
    /// A session ended by DELETE.
    Ended,
    /// Refused by HTTP itself (a GET that does not accept an event stream).
    Refused(Response),
}

impl Observed for Exchange {
    fn observed(self, mut probe: RequestProbe) -> Self {
        match self {
            Exchange::Post(mut out) => {
                out.outcome = match out.outcome {
                    Outcome::Ready(reply) => {
                        let status = status(out.refusal, &reply);
                        probe.finish(match reply.error_code {
                            Some(code) if status == 200 => RequestOutcome::Error(code),
                            Some(_) => RequestOutcome::Rejected(status),
                            None => RequestOutcome::Ok,
                        });
                        Outcome::Ready(reply)
                    }
                    other => other.observed(probe),
                };
                Exchange::Post(out)
            }
            Exchange::Stream(_) | Exchange::Resumed(..) | Exchange::Ended => {
                probe.finish(RequestOutcome::Ok);
                self
            }
            Exchange::Refused(ref response) => {
                probe.finish(RequestOutcome::Rejected(response.status().as_u16()));
                self
            }
        }
    }
}

/// A ready legacy reply, with the status it goes with.
fn ready(refusal: Option<Refusal>, reply: Reply) -> Response {
    let status = status(refusal, &reply);
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

impl Exchange {
    /// The response to send.
    async fn respond(self, accepts: Accepts, keep_alive: Duration) -> Response {
        match self {
            Exchange::Post(out) => {
                let response = match (out.outcome, out.resumable) {
                    (Outcome::Accepted, _) => StatusCode::ACCEPTED.into_response(),
                    (Outcome::Ready(reply), _) => ready(out.refusal, reply),
                    (Outcome::Running(running), Some(at)) if accepts.sse => {
                        super::resume::respond(at, running, keep_alive).await
                    }
                    (other, _) => reply::respond(other, accepts, keep_alive).await,
                };
                with_session(response, out.session_id)
            }
            Exchange::Stream(listen) => {
                reply::sse_response(listen.messages.map(reply::event), keep_alive)
            }
            Exchange::Resumed(priming, events) => sse_after(priming, events, keep_alive),
            Exchange::Ended => StatusCode::NO_CONTENT.into_response(),
            Exchange::Refused(response) => response,
        }
    }

    /// A refusal of the GET or DELETE path.
    fn refusal(out: LegacyOutcome) -> Self {
        match out.outcome {
            Outcome::Ready(reply) => Exchange::Refused(ready(out.refusal, reply)),
            _ => Exchange::Refused(StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        }
    }
}

impl Legacy {
    /// The request's `Mcp-Session-Id` (`found` by the endpoint's pass over its headers):
    /// `Ok(None)` when absent, `Err` when it is empty, repeated or not visible ASCII.
    pub(crate) fn session_header<'a>(
        &self,
        found: Found<'a>,
    ) -> Result<Option<&'a str>, BadSession> {
        match found.text() {
            Ok(Some("")) => Err(BadSession("it is empty")),
            Ok(read) => Ok(read),
            Err(why) => Err(BadSession(why)),
        }
    }

    /// The response to a legacy POST.
    pub(crate) async fn post(
        &self,
        request: HttpRequest<'_>,
        body: &Bytes,
        accepts: Accepts,
    ) -> Response {
        self.over_http(request, accepts, |session, extensions| async move {
            Exchange::Post(self.handle(body, session, extensions).await)
        })
        .await
    }

    /// GET with a session: the session's SSE stream, or with `Last-Event-ID` the POST
    /// stream it names, resumed.
    pub(crate) async fn get(
        &self,
        request: HttpRequest<'_>,
        (headers, accept): (&HeaderMap, Found<'_>),
    ) -> Response {
        let accepts = Accepts { sse: true };
        self.over_http(request, accepts, |session, extensions| async move {
            if !negotiate::allows_event_stream(accept, headers) {
                let why = "Not Acceptable: a session's GET stream is a text/event-stream; Accept must allow it";
                return Exchange::Refused(NotAcceptable(why.into()).into_response());
            }
            let last = headers.get(LAST_EVENT_ID).and_then(|v| v.to_str().ok());
            if let Some(last) = last.filter(|id| !names_get_stream(id)) {
                return match self.resume(session, &extensions, last).await {
                    Ok(events) => Exchange::Resumed(None, events),
                    Err(refused) => Exchange::refusal(refused),
                };
            }
            match self.open_get(session, &extensions, last).await {
                Ok(Opened::Plain(listen)) => Exchange::Stream(listen),
                Ok(Opened::Kept(kept)) => Exchange::Resumed(kept.priming, kept.events),
                Err(refused) => Exchange::refusal(refused),
            }
        })
        .await
    }

    /// DELETE with a session: the session ends on every replica.
    pub(crate) async fn delete(&self, request: HttpRequest<'_>) -> Response {
        let accepts = Accepts { sse: true };
        self.over_http(request, accepts, |session, extensions| async move {
            match self.end_session(session, &extensions).await {
                Ok(()) => Exchange::Ended,
                Err(refused) => Exchange::refusal(refused),
            }
        })
        .await
    }

    /// A GET or DELETE without `Mcp-Session-Id` from a request that says it speaks the
    /// 2025-11-25 era (its `MCP-Protocol-Version`): 400, that revision's answer to a missing
    /// session id (other requests get the 2026 answer, 405 with `Allow: POST`).
    pub(crate) fn no_session(&self) -> Response {
        let error = ErrorObject::invalid_request(Refused::Missing.message());
        ready(Some(Refusal::Missing), Reply::error(None, error))
    }

    /// One exchange over HTTP: `exchange` made of the request's session and extensions,
    /// observed by the core as every request is, then answered.
    async fn over_http<'r, F, Fut>(
        &self,
        request: HttpRequest<'r>,
        accepts: Accepts,
        exchange: F,
    ) -> Response
    where
        F: FnOnce(Option<&'r str>, ::http::Extensions) -> Fut,
        Fut: std::future::Future<Output = Exchange>,
    {
        let HttpRequest {
            mirror,
            session,
            extensions,
            keep_alive,
        } = request;
        self.server()
            .observe(Labels::Headers(mirror), exchange(session, extensions))
            .await
            .respond(accepts, keep_alive)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestId;

    #[test]
    fn refusals_and_errors_map_to_their_statuses() {
        let error = |e: ErrorObject| Reply::error(Some(RequestId::from(1)), e);
        let invalid = error(ErrorObject::invalid_request("x"));
        assert_eq!(status(Some(Refusal::Missing), &invalid), 400);
        assert_eq!(status(Some(Refusal::Malformed), &invalid), 400);
        assert_eq!(status(Some(Refusal::Unknown), &invalid), 404);
        assert_eq!(status(Some(Refusal::Unavailable), &invalid), 503);
        assert_eq!(status(Some(Refusal::TooLarge), &invalid), 413);
        // Unrefused: JSON-RPC errors go with 200, but for an unreadable message.
        assert_eq!(status(None, &invalid), 400);
        assert_eq!(status(None, &error(ErrorObject::parse_error("x"))), 400);
        assert_eq!(status(None, &error(ErrorObject::invalid_params("x"))), 200);
        let mut busy = error(ErrorObject::internal_error("busy"));
        busy.retry_after_secs = Some(1);
        assert_eq!(status(None, &busy), 503);
    }
}

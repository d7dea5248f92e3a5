//! Turning a dispatch [`Outcome`] into an HTTP response: 202, one JSON object, or an SSE
//! stream scoped to the request when the handler sends notifications before its reply.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode, header};
use http_body_util::Full;
use tokio::sync::mpsc;

use futures_util::StreamExt as _;

use super::chunks::Chunks;
use super::limits::in_flight::{Slot, body_holding};
use super::negotiate::Accepts;
use super::rejection::NotAcceptable;
use crate::server::{Outcome, Reply, ReplyBody, Running};

/// The response for an outcome.
pub(crate) async fn respond(outcome: Outcome, accepts: Accepts, keep_alive: Duration) -> Response {
    match outcome {
        Outcome::Accepted => StatusCode::ACCEPTED.into_response(),
        Outcome::Ready(reply) => json(reply),
        Outcome::Listen(listen) => {
            if !accepts.sse {
                return NotAcceptable(
                    "subscriptions/listen answers with a text/event-stream: Accept must allow it"
                        .into(),
                )
                .into_response();
            }
            sse_response(listen.messages.map(event), keep_alive)
        }
        Outcome::Running(Running { mut reply, events }) => {
            let Some(mut events) = events.filter(|_| accepts.sse) else {
                // No notifications can come, or the client cannot take a stream: then they
                // are dropped, not queued. (The HTTP endpoint awaits such replies itself.)
                return json(reply.await);
            };
            tokio::select! {
                biased;
                Some(first) = events.recv() => {
                    sse(VecDeque::from([first]), Some(reply), events, keep_alive)
                }
                done = &mut reply => {
                    let mut queued = VecDeque::new();
                    while let Ok(ev) = events.try_recv() {
                        queued.push_back(ev);
                    }
                    if queued.is_empty() {
                        json(done)
                    } else {
                        queued.push_back(done.into_bytes());
                        sse(queued, None, events, keep_alive)
                    }
                }
            }
        }
    }
}

/// One JSON response, with the status the error code calls for; a body of several chunks
/// goes to hyper as they are, with its length.
pub(crate) fn json(reply: Reply) -> Response {
    json_holding(reply, None)
}

/// [`json`], its body holding the in-flight `slot` until it ends (what
/// [`InFlightLimit::hold`](super::limits::in_flight::InFlightLimit::hold) does to a body,
/// without boxing it a second time).
pub(crate) fn json_holding(reply: Reply, slot: Option<Slot>) -> Response {
    let status = StatusCode::from_u16(reply.http_status()).unwrap_or(StatusCode::OK);
    let retry_after = reply.retry_after_secs;
    let body = match reply.into_body() {
        ReplyBody::One(bytes) => body_holding(Full::new(bytes), slot),
        ReplyBody::Two(chunks) => body_holding(Chunks::new(chunks), slot),
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(secs) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

struct Stream {
    pending: VecDeque<Bytes>,
    reply: Option<BoxFuture<'static, Reply>>,
    events: mpsc::Receiver<Bytes>,
}

pub(crate) fn event(bytes: Bytes) -> Result<Event, Infallible> {
    Ok(Event::default()
        .event("message")
        .data(String::from_utf8_lossy(&bytes)))
}

/// An SSE response: queued messages, then the handler's notifications as they come, then
/// the final response, which ends the stream. Dropping the stream drops (cancels) the handler.
fn sse(
    pending: VecDeque<Bytes>,
    reply: Option<BoxFuture<'static, Reply>>,
    events: mpsc::Receiver<Bytes>,
    keep_alive: Duration,
) -> Response {
    let state = Stream {
        pending,
        reply,
        events,
    };
    let stream = futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(next) = st.pending.pop_front() {
                if next.is_empty() {
                    // A handler's request to close its stream: only the legacy side can
                    // resume one, so here it is dropped.
                    continue;
                }
                return Some((event(next), st));
            }
            let Stream {
                reply,
                events,
                pending,
            } = &mut st;
            let fut = reply.as_mut()?;
            tokio::select! {
                biased;
                Some(ev) = events.recv() => pending.push_back(ev),
                done = fut => {
                    while let Ok(ev) = events.try_recv() {
                        pending.push_back(ev);
                    }
                    pending.push_back(done.into_bytes());
                    *reply = None;
                }
            }
        }
    });
    sse_response(stream, keep_alive)
}

/// Frames `events` as an SSE response with keepalive comments, unbuffered by proxies.
pub(crate) fn sse_response<S>(events: S, keep_alive: Duration) -> Response
where
    S: futures_util::Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

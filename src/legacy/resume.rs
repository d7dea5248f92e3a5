//! Resumable POST streams of 2025-11-25 clients, on any replica.
//!
//! A legacy `tools/call` (or any request) answered with an SSE stream starts with a
//! priming event (an `id`, empty data, and `retry:` [`RETRY`]); every later event carries an
//! `id` too, `STREAM-SEQ`: a random stream name and the event's place in it. Each event is
//! appended to the [`EventStore`] before it is sent, under the session's key, so a client
//! that lost the stream GETs the endpoint with its `Mcp-Session-Id` and `Last-Event-ID` on
//! any replica and gets the events after that id ([`Legacy::resume`]), then the rest as they
//! are stored, until the response; the store is polled (every 50 ms, backing off to 500 ms)
//! for at most [`RESUME_WAIT`], then the stream ends and the client may GET again.
//!
//! A handler may close its stream before its response ([`CLOSE_STREAM`](crate::handler::context::CLOSE_STREAM), SSE polling): the
//! stream ends and the handler carries on in this process, its messages and response going
//! to the store only. A client that disconnects on its own still cancels the call (the
//! response stream, and with it the handler, is dropped), as before resumption existed: a
//! call whose client left is not worth finishing unless the handler asked for polling.
//!
//! A `Last-Event-ID` that names no stream of the request's session (malformed, expired,
//! evicted, or another session's) gets an empty stream that ends at once (200), never
//! another session's events and never a 404 (which would tell the client its session ended).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore as _;
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Legacy;
use crate::backends::events::{EventStore, StoredEvent};
use crate::server::{Reply, Running};
use crate::transport::http::reply;

/// The `retry:` hint of a resumable stream's priming event: how long a client waits before
/// it reconnects with `Last-Event-ID` after the stream ends (1 s).
pub(crate) const RETRY: Duration = Duration::from_secs(1);
/// How long a resumed stream waits for events still to come before it ends (the client
/// then GETs again with its last id).
pub(crate) const RESUME_WAIT: Duration = Duration::from_secs(60);
const FIRST_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_millis(500);

/// SSE items.
pub(crate) type Events = BoxStream<'static, Result<Event, Infallible>>;

/// Where a legacy POST's stream is kept: the store and the session's key.
#[derive(Clone)]
pub(crate) struct Resumable {
    pub(crate) store: Arc<dyn EventStore>,
    pub(crate) session: Arc<str>,
}

impl Resumable {
    /// Appends `data` to the stream `name` and gives its event id, or `None` when the store
    /// failed (the event is still sent, without an id).
    pub(super) async fn stored_id(&self, name: &str, data: &Bytes, last: bool) -> Option<String> {
        match self
            .store
            .append(&self.session, name, data.clone(), last)
            .await
        {
            Ok(seq) => Some(event_id(name, seq)),
            Err(e) => {
                tracing::warn!(error = %e, "an event of a resumable stream could not be stored; sent without an id");
                None
            }
        }
    }
}

/// The message of `event`, stored in the stream `name`, with its id; `None` for one without
/// data (a priming event).
pub(super) fn stored_message(name: &str, event: &StoredEvent) -> Option<Event> {
    (!event.data.is_empty()).then(|| message(Some(event_id(name, event.seq)), &event.data))
}

impl std::fmt::Debug for Resumable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resumable").finish_non_exhaustive()
    }
}

pub(super) fn event_id(stream: &str, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// The stream and sequence number a `Last-Event-ID` names.
pub(super) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.rsplit_once('-')?;
    let seq = seq.parse().ok()?;
    (!stream.is_empty() && stream.len() <= 64).then_some((stream, seq))
}

pub(super) fn message(id: Option<String>, data: &Bytes) -> Event {
    let event = Event::default()
        .event("message")
        .data(String::from_utf8_lossy(data));
    match id {
        Some(id) => event.id(id),
        None => event,
    }
}

pub(super) fn new_stream_name() -> String {
    let mut raw = [0u8; 16];
    OsRng.fill_bytes(&mut raw);
    URL_SAFE_NO_PAD.encode(raw)
}

/// A message waiting to be sent: its bytes, and whether it is the response.
type Queued = (Bytes, bool);

struct Post {
    at: Resumable,
    /// The stream's name; `None` when the store failed at its start (sent without ids).
    stream: Option<String>,
    pending: VecDeque<Queued>,
    reply: Option<BoxFuture<'static, Reply>>,
    events: mpsc::Receiver<Bytes>,
}

impl Post {
    /// Appends `data` to the store; its id, or `None` when the store failed (the event is
    /// still sent, without an id).
    async fn store(&mut self, data: &Bytes, last: bool) -> Option<String> {
        let stream = self.stream.as_deref()?;
        self.at.stored_id(stream, data, last).await
    }

    async fn next(mut self) -> Option<(Result<Event, Infallible>, Self)> {
        loop {
            if let Some((data, last)) = self.pending.pop_front() {
                if data.is_empty() {
                    if let Some(stream) = self.stream.take() {
                        // Closed by the handler: the rest goes to the store only.
                        let rest = CarryOn {
                            at: self.at.clone(),
                            stream,
                            pending: std::mem::take(&mut self.pending),
                            reply: self.reply.take(),
                            events: self.events,
                        };
                        tokio::spawn(rest.run());
                        return None;
                    }
                    continue;
                }
                let id = self.store(&data, last).await;
                return Some((Ok(message(id, &data)), self));
            }
            if !wait_for_more(&mut self.pending, &mut self.reply, &mut self.events).await {
                return None;
            }
        }
    }
}

/// Waits for the handler's next message or its response and queues it in `pending` (the
/// response last, marked `true`, after the messages sent before it); `false` when the
/// response was queued already and nothing more can come.
async fn wait_for_more(
    pending: &mut VecDeque<Queued>,
    reply: &mut Option<BoxFuture<'static, Reply>>,
    events: &mut mpsc::Receiver<Bytes>,
) -> bool {
    let Some(fut) = reply.as_mut() else {
        return false;
    };
    tokio::select! {
        biased;
        Some(ev) = events.recv() => pending.push_back((ev, false)),
        done = fut => {
            while let Ok(ev) = events.try_recv() {
                pending.push_back((ev, false));
            }
            pending.push_back((done.into_bytes(), true));
            *reply = None;
        }
    }
    true
}

/// A call whose stream its handler closed: its messages and response, to the store.
struct CarryOn {
    at: Resumable,
    stream: String,
    pending: VecDeque<Queued>,
    reply: Option<BoxFuture<'static, Reply>>,
    events: mpsc::Receiver<Bytes>,
}

impl CarryOn {
    async fn run(mut self) {
        loop {
            while let Some((data, last)) = self.pending.pop_front() {
                if data.is_empty() {
                    continue;
                }
                let stored = self
                    .at
                    .store
                    .append(&self.at.session, &self.stream, data, last)
                    .await;
                if let Err(e) = stored {
                    tracing::warn!(error = %e, "an event of a closed stream could not be stored; the client will not see it");
                }
            }
            if !wait_for_more(&mut self.pending, &mut self.reply, &mut self.events).await {
                return;
            }
        }
    }
}

/// The SSE response of a legacy request whose handler runs, for a client that accepts a
/// stream: JSON when the response comes before any message, else a resumable stream.
pub(crate) async fn respond(
    at: Resumable,
    running: Running,
    keep_alive: Duration,
) -> axum::response::Response {
    let Running { mut reply, events } = running;
    let Some(mut events) = events else {
        return reply::json(reply.await);
    };
    let mut pending = VecDeque::new();
    let reply = tokio::select! {
        biased;
        Some(first) = events.recv() => {
            pending.push_back((first, false));
            Some(reply)
        }
        done = &mut reply => {
            while let Ok(ev) = events.try_recv() {
                if !ev.is_empty() {
                    pending.push_back((ev, false));
                }
            }
            if pending.is_empty() {
                return reply::json(done);
            }
            pending.push_back((done.into_bytes(), true));
            None
        }
    };
    let stream = new_stream_name();
    let (stream, priming) = match at
        .store
        .append(&at.session, &stream, Bytes::new(), false)
        .await
    {
        Ok(seq) => {
            let priming = priming(&event_id(&stream, seq));
            (Some(stream), Some(priming))
        }
        Err(e) => {
            tracing::warn!(error = %e, "the event store could not open a resumable stream; it is sent without ids");
            (None, None)
        }
    };
    let post = Post {
        at,
        stream,
        pending,
        reply,
        events,
    };
    let events: Events = Box::pin(futures_util::stream::unfold(post, Post::next));
    sse_after(priming, events, keep_alive)
}

/// The SSE response of `events`, after the `priming` event when there is one.
pub(crate) fn sse_after(
    priming: Option<Bytes>,
    events: Events,
    keep_alive: Duration,
) -> axum::response::Response {
    let response = reply::sse_response(events, keep_alive);
    match priming {
        Some(first) => response.map(|body| {
            let first = futures_util::stream::once(async move { Ok::<_, axum::Error>(first) });
            axum::body::Body::from_stream(first.chain(body.into_data_stream()))
        }),
        None => response,
    }
}

/// The priming event of a stream: its first id, `retry:`, and an empty `data:` field, which
/// makes clients dispatch it (and record the id) without a message. Framed here because
/// axum's `Event` writes no `data:` field for empty data.
pub(super) fn priming(id: &str) -> Bytes {
    Bytes::from(format!(
        "id: {id}\nretry: {}\ndata: \n\n",
        RETRY.as_millis()
    ))
}

/// A resumed stream: the stored events after the one the client saw, then those still to
/// come, polled, until the response, [`RESUME_WAIT`] or the server drains.
struct Replay {
    at: Resumable,
    stream: String,
    after: u64,
    ready: VecDeque<StoredEvent>,
    done: bool,
    poll: Duration,
    deadline: tokio::time::Instant,
    shutdown: CancellationToken,
    _slot: crate::server::listen::Slot,
}

impl Replay {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Self)> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                self.after = event.seq;
                self.done = event.last;
                if let Some(message) = stored_message(&self.stream, &event) {
                    return Some((Ok(message), self));
                }
            }
            if self.done {
                return None;
            }
            tokio::select! {
                biased;
                _ = self.shutdown.cancelled() => return None,
                _ = tokio::time::sleep_until(self.deadline) => return None,
                _ = tokio::time::sleep(self.poll) => {}
            }
            self.poll = (self.poll * 2).min(MAX_POLL);
            let read = self
                .at
                .store
                .after(&self.at.session, &self.stream, self.after)
                .await;
            match read {
                Ok(Some(events)) => {
                    if !events.is_empty() {
                        self.poll = FIRST_POLL;
                    }
                    self.ready.extend(events);
                }
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!(error = %e, "a resumed stream could not read the event store; it ends");
                    return None;
                }
            }
        }
    }
}

/// Why a stream was not resumed.
pub(crate) enum NotResumed {
    /// The event store could not answer.
    Store(crate::Error),
    /// This replica holds its maximum of streams.
    Full,
}

impl Legacy {
    /// Where the POST streams of the session `session` are kept.
    pub(crate) fn resumable(&self, session: Arc<str>) -> Resumable {
        Resumable {
            store: self.state.settings.events.clone(),
            session,
        }
    }

    /// The stream `last_event_id` names among the POST streams of the session whose store
    /// key is `session`, resumed after that event: empty when it names no stream of this
    /// session (malformed, expired, another session's) or the stream is over.
    pub(crate) async fn replay(
        &self,
        session: Arc<str>,
        last_event_id: &str,
    ) -> Result<Events, NotResumed> {
        let Some((stream, after)) = parse_event_id(last_event_id) else {
            return Ok(Box::pin(futures_util::stream::empty()));
        };
        let at = self.resumable(session);
        // From the client's own last event: when that was the response, the stream is over.
        let found = at
            .store
            .after(&at.session, stream, after.saturating_sub(1))
            .await
            .map_err(NotResumed::Store)?;
        let Some(found) = found else {
            return Ok(Box::pin(futures_util::stream::empty()));
        };
        let over = found.iter().any(|e| e.seq == after && e.last);
        if over {
            return Ok(Box::pin(futures_util::stream::empty()));
        }
        let ready: VecDeque<StoredEvent> = found.into_iter().filter(|e| e.seq > after).collect();
        let listeners = self.server.listeners();
        let Some(slot) = listeners.acquire() else {
            return Err(NotResumed::Full);
        };
        let replay = Replay {
            at,
            stream: stream.to_owned(),
            after,
            ready,
            done: false,
            poll: FIRST_POLL,
            deadline: tokio::time::Instant::now() + RESUME_WAIT,
            shutdown: listeners.shutdown().clone(),
            _slot: slot,
        };
        Ok(Box::pin(futures_util::stream::unfold(replay, Replay::next)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_name_their_stream() {
        let name = new_stream_name();
        assert_eq!(name.len(), 22);
        let id = event_id(&name, 7);
        assert_eq!(parse_event_id(&id), Some((name.as_str(), 7)));
        // Stream names may hold '-' (URL-safe base64): the number is after the last one.
        assert_eq!(parse_event_id("a-b-12"), Some(("a-b", 12)));
        assert_eq!(parse_event_id("nope"), None);
        assert_eq!(parse_event_id("-3"), None);
        assert_eq!(parse_event_id("a-x"), None);
    }

    #[test]
    fn the_priming_event_has_an_id_a_retry_and_empty_data() {
        assert_eq!(
            priming("s-1"),
            Bytes::from_static(b"id: s-1\nretry: 1000\ndata: \n\n")
        );
    }
}

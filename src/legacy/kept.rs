//! Resumable GET streams of 2025-11-25 sessions (opt-in:
//! [`ServerBuilder::resumable_get_streams`](crate::ServerBuilder::resumable_get_streams)).
//!
//! A session's GET stream is kept in the same [`EventStore`](crate::extend::EventStore) as
//! resumable POST streams: it opens with a priming event (an id, `retry:`), and each
//! notification is appended under the session's key before it is sent with its id
//! `g.NAME-SEQ` (the `g.` tells a GET stream from a POST stream). A client that lost it GETs
//! again with `Last-Event-ID`, on any replica, and gets:
//! 1. the stored notifications after that id (those the lost connection carried but the
//!    client never read), with their ids;
//! 2. a resync: every list it advertises changed, every subscribed resource updated. What was
//!    announced while no stream of the session was open reached no replica's stream and was
//!    never stored, so the client is told to fetch again rather than left to miss it; these
//!    notifications are hints to re-read, and one too many costs a re-read;
//! 3. then the live stream, continuing the same stream (ids go on from the last one).
//!
//! An id the store no longer holds (expired, evicted, another session's) gets a fresh stream
//! with a resync, never another session's events. Storing costs one store write per
//! notification per open stream (a list change heard by N open streams: N writes), which is
//! why it is opt-in. Appends come from one writer at a time: the replica that took the stream
//! over; a notification the lost connection's replica stores after the takeover read it is
//! not replayed (the resync covers it).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;

use super::Legacy;
use super::resume::{
    Events, Resumable, event_id, message, new_stream_name, parse_event_id, priming, stored_message,
};
use crate::transport::http::reply;

/// The prefix of a GET stream's name (URL-safe base64, which POST stream names are, holds no
/// `.`).
const GET_STREAM: &str = "g.";

/// Whether `last_event_id` names an event of a GET stream (not of a POST stream).
pub(crate) fn names_get_stream(last_event_id: &str) -> bool {
    last_event_id.starts_with(GET_STREAM)
}

/// A GET stream kept in the event store, ready to send.
pub(crate) struct Kept {
    /// The priming event of a new stream (`None` when it continues one, or when the store
    /// failed and it goes without ids).
    pub(crate) priming: Option<Bytes>,
    /// Its events, with their ids.
    pub(crate) events: Events,
}

impl Legacy {
    /// The GET stream of `messages`, kept under the session whose store key is `session`:
    /// the stream `last_event_id` names continued after that event when the store still
    /// holds it, else a new one. `Err` when the store could not be read for a resume.
    pub(crate) async fn keep(
        &self,
        session: Arc<str>,
        messages: BoxStream<'static, Bytes>,
        last_event_id: Option<&str>,
    ) -> Result<Kept, crate::Error> {
        let at = self.resumable(session);
        let named = last_event_id
            .and_then(parse_event_id)
            .filter(|(name, _)| name.starts_with(GET_STREAM));
        if let Some((name, after)) = named {
            if let Some(stored) = at.store.after(&at.session, name, after).await? {
                let name = name.to_owned();
                let replayed: Vec<_> = stored
                    .iter()
                    .filter_map(|e| stored_message(&name, e).map(Ok))
                    .collect();
                let events = futures_util::stream::iter(replayed).chain(live(at, name, messages));
                return Ok(Kept {
                    priming: None,
                    events: Box::pin(events),
                });
            }
        }
        let name = format!("{GET_STREAM}{}", new_stream_name());
        match at
            .store
            .append(&at.session, &name, Bytes::new(), false)
            .await
        {
            Ok(seq) => Ok(Kept {
                priming: Some(priming(&event_id(&name, seq))),
                events: live(at, name, messages),
            }),
            Err(e) => {
                tracing::warn!(error = %e, "the event store could not open a resumable GET stream; it is sent without ids");
                Ok(Kept {
                    priming: None,
                    events: Box::pin(messages.map(reply::event)),
                })
            }
        }
    }
}

/// `messages`, each appended to the stream `name` and sent with its id (without one when
/// the store failed: [`Resumable::stored_id`]).
fn live(at: Resumable, name: String, messages: BoxStream<'static, Bytes>) -> Events {
    let to = Arc::new((at, name));
    Box::pin(messages.then(move |data| {
        let to = to.clone();
        async move {
            let (at, name) = &*to;
            Ok(message(at.stored_id(name, &data, false).await, &data))
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_stream_ids_are_told_from_post_stream_ids() {
        let get = format!("{GET_STREAM}{}", new_stream_name());
        assert!(names_get_stream(&event_id(&get, 3)));
        assert_eq!(parse_event_id(&event_id(&get, 3)), Some((get.as_str(), 3)));
        assert!(!names_get_stream(&event_id(&new_stream_name(), 3)));
    }
}

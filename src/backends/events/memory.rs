//! The in-process event store.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::{EventLimits, EventStore, StoredEvent};
use crate::Error;

/// The most streams a [`MemoryEventStore`] holds by default.
const DEFAULT_MAX_STREAMS: usize = 1024;

/// An [`EventStore`] in this process's memory: enough for one replica (a stream cut there
/// resumes there only). It holds at most `max_streams` live streams; when full, expired
/// streams are dropped, then the stream appended to longest ago. Its memory is bounded by
/// `max_streams` × ([`EventLimits::max_bytes`] + the largest single event) plus about 100
/// bytes per event and 200 per stream of bookkeeping.
///
/// ```
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::{EventLimits, MemoryEventStore};
///
/// let store = Arc::new(MemoryEventStore::new(EventLimits::default(), 256));
/// let server = Server::builder().event_store(store.clone()).build().unwrap();
/// assert!(store.is_empty());
/// # drop(server);
/// ```
#[derive(Debug)]
pub struct MemoryEventStore {
    limits: EventLimits,
    max_streams: usize,
    streams: Mutex<HashMap<(String, String), Log>>,
}

#[derive(Debug, Default)]
struct Log {
    next: u64,
    events: VecDeque<StoredEvent>,
    bytes: usize,
    expires: Option<Instant>,
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new(EventLimits::default(), DEFAULT_MAX_STREAMS)
    }
}

impl MemoryEventStore {
    /// A store keeping `limits` of each stream, and at most `max_streams` streams.
    pub fn new(limits: EventLimits, max_streams: usize) -> Self {
        MemoryEventStore {
            limits,
            max_streams: max_streams.max(1),
            streams: Mutex::new(HashMap::new()),
        }
    }

    /// How many streams it holds (expired ones included until they are swept).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds no stream.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Log>> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn append_now(&self, session: &str, stream: &str, data: Bytes, last: bool) -> u64 {
        let now = Instant::now();
        let mut streams = self.lock();
        let key = (session.to_owned(), stream.to_owned());
        if !streams.contains_key(&key) && streams.len() >= self.max_streams {
            streams.retain(|_, log| log.expires.is_some_and(|at| at > now));
            if streams.len() >= self.max_streams {
                let oldest = streams
                    .iter()
                    .min_by_key(|(_, log)| log.expires)
                    .map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    streams.remove(&oldest);
                }
            }
        }
        let log = streams.entry(key).or_default();
        if log.expires.is_some_and(|at| at <= now) {
            *log = Log::default();
        }
        log.next += 1;
        let seq = log.next;
        log.bytes += data.len();
        log.events.push_back(StoredEvent::new(seq, data, last));
        while log.events.len() > 1
            && (log.events.len() > self.limits.max_events || log.bytes > self.limits.max_bytes)
        {
            if let Some(old) = log.events.pop_front() {
                log.bytes -= old.data.len();
            }
        }
        log.expires = Some(now + self.limits.ttl);
        seq
    }

    fn after_now(&self, session: &str, stream: &str, after: u64) -> Option<Vec<StoredEvent>> {
        let streams = self.lock();
        let log = streams.get(&(session.to_owned(), stream.to_owned()))?;
        if log.expires.is_some_and(|at| at <= Instant::now()) {
            return None;
        }
        Some(
            log.events
                .iter()
                .filter(|e| e.seq > after)
                .cloned()
                .collect(),
        )
    }
}

impl EventStore for MemoryEventStore {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: Bytes,
        last: bool,
    ) -> BoxFuture<'a, Result<u64, Error>> {
        let seq = self.append_now(session, stream, data, last);
        Box::pin(async move { Ok(seq) })
    }

    fn after<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        after: u64,
    ) -> BoxFuture<'a, Result<Option<Vec<StoredEvent>>, Error>> {
        let found = self.after_now(session, stream, after);
        Box::pin(async move { Ok(found) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn holds_at_most_max_streams() {
        let store = MemoryEventStore::new(EventLimits::default(), 2);
        for stream in ["a", "b", "c"] {
            store
                .append("s", stream, Bytes::from("x"), false)
                .await
                .unwrap();
        }
        assert_eq!(store.len(), 2);
        // The stream appended to longest ago went.
        assert_eq!(store.after("s", "a", 0).await.unwrap(), None);
        assert!(store.after("s", "c", 0).await.unwrap().is_some());
    }
}

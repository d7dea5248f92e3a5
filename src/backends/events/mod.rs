//! Resumable 2025-11-25 streams: the [`EventStore`] contract and the stores that ship.
//!
//! A legacy POST stream's events are appended as they are sent, each with its place in the
//! stream (its sequence number, which the SSE `id` carries); a client that lost the stream
//! sends `Last-Event-ID` to any replica, which reads what came after it from the store.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use crate::Error;

pub use memory::MemoryEventStore;
#[cfg(feature = "redis")]
pub use redis::RedisEventStore;

/// One stored event of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredEvent {
    /// Its place in the stream: 1 for the first event appended, then 2, 3, …
    pub seq: u64,
    /// The message (one JSON-RPC message; empty for the priming event).
    pub data: Bytes,
    /// Whether it is the stream's last event (the response that ends it).
    pub last: bool,
}

impl StoredEvent {
    /// The event `seq` carrying `data`, the stream's `last` one or not.
    pub fn new(seq: u64, data: Bytes, last: bool) -> Self {
        StoredEvent { seq, data, last }
    }
}

/// How much of each stream a store keeps, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct EventLimits {
    /// The most events kept per stream (the oldest go first). Default 128.
    pub max_events: usize,
    /// The most bytes of event data kept per stream (the oldest go first; the newest event
    /// is kept whatever its size). Default 256 KiB.
    pub max_bytes: usize,
    /// How long a stream is kept after its last append. Default 10 minutes.
    pub ttl: Duration,
}

impl Default for EventLimits {
    fn default() -> Self {
        EventLimits {
            max_events: 128,
            max_bytes: 256 * 1024,
            ttl: Duration::from_secs(600),
        }
    }
}

impl EventLimits {
    /// These limits with at most `n` events per stream (at least 1).
    #[must_use]
    pub fn max_events(mut self, n: usize) -> Self {
        self.max_events = n.max(1);
        self
    }

    /// These limits with at most `n` bytes of data per stream.
    #[must_use]
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }

    /// These limits with streams kept `ttl` after their last append.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
}

/// Where the events of resumable 2025-11-25 streams are kept, shared by the replicas.
///
/// A stream is named by the session it belongs to (the key of its sealed session id, which
/// only that session's requests open) and by a random stream name; the SSE `id` of each event
/// is `STREAM-SEQ`, so a `Last-Event-ID` names its stream, and the server reads it only under
/// the session of the request that sent it: another session's events are never read.
///
/// The contract every store keeps (one contract test suite runs it against each):
/// - `append` adds an event to the stream `(session, stream)`, creating it, and answers its
///   sequence number: 1 for a stream's first event, then one more each time, never reused.
///   It keeps at most [`EventLimits::max_events`] events and
///   [`EventLimits::max_bytes`] bytes of data per stream, dropping the oldest (never the
///   event just appended), and keeps the stream for [`EventLimits::ttl`] after the append.
/// - `after` answers the kept events of the stream with a sequence number above `after`, in
///   order; `None` when the store holds no such stream (never appended to, expired, or
///   another session's).
/// - Appends to one stream come from one writer at a time (the replica serving it).
pub trait EventStore: Send + Sync + 'static {
    /// Appends `data` to the stream `stream` of `session` (`last`: the event that ends it);
    /// its sequence number.
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: Bytes,
        last: bool,
    ) -> BoxFuture<'a, Result<u64, Error>>;

    /// The kept events of the stream `stream` of `session` after the sequence number
    /// `after`; `None` when there is no such stream.
    fn after<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        after: u64,
    ) -> BoxFuture<'a, Result<Option<Vec<StoredEvent>>, Error>>;
}

//! The Redis event store (feature `redis`).

use std::fmt;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::{EventLimits, EventStore, StoredEvent};
use crate::Error;
use crate::backends::redis_conn as redis_support;

/// Appends an event: the next sequence number and the byte count live in the hash
/// `KEYS[2]`, the events (`SEQ LAST DATA`) in the list `KEYS[1]`; the oldest go while the
/// stream is over its limits (never the one appended); both keys expire together.
/// `ARGV`: data, last (0/1), max events, max bytes, ttl in ms. Answers the sequence number.
const APPEND: &str = r"
local seq = redis.call('HINCRBY', KEYS[2], 's', 1)
local bytes = redis.call('HINCRBY', KEYS[2], 'b', #ARGV[1])
local n = redis.call('RPUSH', KEYS[1], seq .. ' ' .. ARGV[2] .. ' ' .. ARGV[1])
local max_n = tonumber(ARGV[3])
local max_b = tonumber(ARGV[4])
while n > 1 and (n > max_n or bytes > max_b) do
  local old = redis.call('LPOP', KEYS[1])
  local a = string.find(old, ' ', 1, true)
  local b = string.find(old, ' ', a + 1, true)
  bytes = redis.call('HINCRBY', KEYS[2], 'b', b - #old)
  n = n - 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return seq
";

/// An [`EventStore`] in Redis, shared by every replica using the same Redis and prefix, so
/// a stream cut on one replica resumes on any: each stream is a list `PREFIX.ev.SESSION.STREAM`
/// and a small hash beside it (`….n`, its next number and byte count), both expiring
/// [`EventLimits::ttl`] after the last append. An append is one `EVAL`, a read one `LRANGE`.
/// Redis memory is bounded per stream by [`EventLimits`] (the newest event is kept whatever
/// its size); the number of streams by the sessions' traffic and the TTL.
///
/// ```no_run
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::{EventLimits, RedisEventStore};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Inside a Tokio runtime; every replica uses the same Redis and prefix.
/// let store = RedisEventStore::connect("redis://redis:6379", "my-mcp", EventLimits::default())?;
/// let server = Server::builder().event_store(Arc::new(store)).build()?;
/// # drop(server);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisEventStore {
    conn: redis_support::StoreConn,
    prefix: String,
    target: String,
    limits: EventLimits,
}

impl fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .field("limits", &self.limits)
            .finish()
    }
}

impl RedisEventStore {
    /// A store on the Redis at `url`, keys under `PREFIX.ev.`, keeping `limits` of each
    /// stream. The connection is made on first use and re-made when lost.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime.
    pub fn connect(
        url: &str,
        prefix: impl Into<String>,
        limits: EventLimits,
    ) -> Result<Self, Error> {
        let lazy = redis_support::connect_lazy(url, "RedisEventStore::connect")?;
        Ok(RedisEventStore {
            conn: lazy.for_store("event"),
            prefix: prefix.into(),
            target: lazy.target,
            limits,
        })
    }

    fn key(&self, session: &str, stream: &str) -> String {
        format!("{}.ev.{session}.{stream}", self.prefix)
    }

    fn context(&self) -> String {
        format!("event store (Redis at {})", self.target)
    }
}

/// An entry `SEQ LAST DATA` as stored.
fn parse(entry: &[u8]) -> Option<StoredEvent> {
    let mut parts = entry.splitn(3, |b| *b == b' ');
    let seq = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
    let last = parts.next()? == b"1";
    let data = Bytes::copy_from_slice(parts.next()?);
    Some(StoredEvent::new(seq, data, last))
}

impl EventStore for RedisEventStore {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: Bytes,
        last: bool,
    ) -> BoxFuture<'a, Result<u64, Error>> {
        Box::pin(async move {
            let key = self.key(session, stream);
            let ttl = self.limits.ttl.as_millis().clamp(1, u128::from(u64::MAX));
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(APPEND)
                .arg(2)
                .arg(&key)
                .arg(format!("{key}.n"))
                .arg(data.as_ref())
                .arg(if last { "1" } else { "0" })
                .arg(self.limits.max_events)
                .arg(self.limits.max_bytes)
                .arg(ttl.to_string());
            self.conn.query::<u64>(&cmd, self.context()).await
        })
    }

    fn after<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        after: u64,
    ) -> BoxFuture<'a, Result<Option<Vec<StoredEvent>>, Error>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("LRANGE");
            cmd.arg(self.key(session, stream)).arg(0).arg(-1);
            let entries: Vec<Vec<u8>> = self.conn.query(&cmd, self.context()).await?;
            if entries.is_empty() {
                return Ok(None);
            }
            let mut events = Vec::with_capacity(entries.len());
            for entry in &entries {
                let event = parse(entry).ok_or_else(|| {
                    Error::unavailable(self.context(), "an event entry is unreadable")
                })?;
                if event.seq > after {
                    events.push(event);
                }
            }
            Ok(Some(events))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back() {
        assert_eq!(
            parse(b"12 1 {\"a\": 1}"),
            Some(StoredEvent::new(12, Bytes::from("{\"a\": 1}"), true))
        );
        assert_eq!(
            parse(b"1 0 "),
            Some(StoredEvent::new(1, Bytes::new(), false))
        );
        assert_eq!(parse(b"x 0 a"), None);
        assert_eq!(parse(b"1"), None);
    }
}

//! The in-process replay store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use futures_util::future::BoxFuture;

use super::ReplayStore;
use crate::Error;

/// The most ids a [`MemoryReplayStore`] holds by default.
pub(crate) const DEFAULT_MAX_ENTRIES: usize = 1_000_000;

/// A [`ReplayStore`] in this process's memory: enough for one replica (a state used on one
/// replica is not known to the others). Expired ids are dropped as new ones arrive; when it
/// holds `max_entries` live ids it refuses new claims (fails closed) with
/// [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable).
///
/// ```
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::MemoryReplayStore;
///
/// let store = Arc::new(MemoryReplayStore::new(100_000));
/// let server = Server::builder().replay_store(store.clone()).build().unwrap();
/// assert!(store.is_empty());
/// # drop(server);
/// ```
#[derive(Debug)]
pub struct MemoryReplayStore {
    max_entries: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    used: HashMap<String, SystemTime>,
    /// Size after the last sweep of expired ids; the next sweep happens at twice that.
    swept_at: usize,
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_ENTRIES)
    }
}

impl MemoryReplayStore {
    /// A store holding at most `max_entries` live ids.
    pub fn new(max_entries: usize) -> Self {
        MemoryReplayStore {
            max_entries: max_entries.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// How many ids it holds now (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.lock().used.len()
    }

    /// Whether it holds no id.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn claim_at(&self, id: &str, expires: SystemTime, now: SystemTime) -> Result<bool, Error> {
        let mut inner = self.lock();
        if let Some(until) = inner.used.get(id) {
            if *until > now {
                return Ok(false);
            }
        }
        let len = inner.used.len();
        if len >= self.max_entries || len >= (inner.swept_at * 2).max(1024) {
            inner.used.retain(|_, until| *until > now);
            inner.swept_at = inner.used.len();
            if inner.used.len() >= self.max_entries {
                return Err(Error::unavailable(
                    "the replay store is full",
                    format!("{} single-use states are alive", self.max_entries),
                ));
            }
        }
        inner.used.insert(id.to_owned(), expires);
        Ok(true)
    }
}

impl ReplayStore for MemoryReplayStore {
    fn claim<'a>(&'a self, id: &'a str, expires: SystemTime) -> BoxFuture<'a, Result<bool, Error>> {
        let r = self.claim_at(id, expires, SystemTime::now());
        Box::pin(async move { r })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn first_claim_wins_until_expiry_and_memory_stays_bounded() {
        let store = MemoryReplayStore::new(3);
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let later = t0 + Duration::from_secs(60);
        assert!(store.claim_at("a", later, t0).unwrap());
        assert!(!store.claim_at("a", later, t0).unwrap());
        assert!(store.claim_at("b", later, t0).unwrap());
        assert!(store.claim_at("c", later, t0).unwrap());
        // Full of live ids: fails closed rather than forgetting one.
        let e = store.claim_at("d", later, t0).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable);
        // Once they expire, they are swept and room is made.
        let after = later + Duration::from_secs(1);
        assert!(
            store
                .claim_at("d", after + Duration::from_secs(60), after)
                .unwrap()
        );
        assert_eq!(store.len(), 1);
        // An expired id may be claimed again (its state can no longer be opened anyway).
        assert!(
            store
                .claim_at("a", after + Duration::from_secs(60), after)
                .unwrap()
        );
    }
}

//! The in-process idempotency store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::{IdempotencyClaim, IdempotencyStore};
use crate::Error;

/// The most keys a [`MemoryIdempotencyStore`] holds by default.
const DEFAULT_MAX_ENTRIES: usize = 100_000;

/// An [`IdempotencyStore`] in this process's memory: enough for one replica (a key used on
/// one replica is not known to the others). Expired keys are dropped as new ones arrive;
/// when it holds `max_entries` live keys it refuses new claims (the call is refused with a
/// retryable error, never run unguarded). Its memory is bounded by `max_entries` times the
/// largest result the server keeps
/// ([`IdempotencySettings::max_result_bytes`](crate::settings::IdempotencySettings::max_result_bytes))
/// plus about 200 bytes of key and bookkeeping each.
///
/// ```
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::MemoryIdempotencyStore;
///
/// let store = Arc::new(MemoryIdempotencyStore::new(10_000));
/// let server = Server::builder().idempotency_store(store.clone()).build().unwrap();
/// assert!(store.is_empty());
/// # drop(server);
/// ```
#[derive(Debug)]
pub struct MemoryIdempotencyStore {
    max_entries: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    keys: HashMap<String, Entry>,
    /// Size after the last sweep of expired keys; the next sweep happens at twice that.
    swept_at: usize,
}

#[derive(Debug)]
struct Entry {
    fingerprint: String,
    owner: String,
    result: Option<Bytes>,
    expires: Instant,
}

impl Default for MemoryIdempotencyStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_ENTRIES)
    }
}

impl MemoryIdempotencyStore {
    /// A store holding at most `max_entries` live keys.
    pub fn new(max_entries: usize) -> Self {
        MemoryIdempotencyStore {
            max_entries: max_entries.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// How many keys it holds now (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.lock().keys.len()
    }

    /// Whether it holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn claim_now(
        &self,
        key: &str,
        fingerprint: &str,
        owner: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, Error> {
        let now = Instant::now();
        let mut inner = self.lock();
        if let Some(e) = inner.keys.get(key).filter(|e| e.expires > now) {
            return Ok(if e.fingerprint != fingerprint {
                IdempotencyClaim::Conflict
            } else if let Some(result) = &e.result {
                IdempotencyClaim::Done(result.clone())
            } else if e.owner == owner {
                IdempotencyClaim::Claimed
            } else {
                IdempotencyClaim::InFlight
            });
        }
        let len = inner.keys.len();
        if len >= self.max_entries || len >= (inner.swept_at * 2).max(1024) {
            inner.keys.retain(|_, e| e.expires > now);
            inner.swept_at = inner.keys.len();
            if inner.keys.len() >= self.max_entries {
                return Err(Error::unavailable(
                    "idempotency store (memory)",
                    format!("full: {} live keys", self.max_entries),
                ));
            }
        }
        inner.keys.insert(
            key.to_owned(),
            Entry {
                fingerprint: fingerprint.to_owned(),
                owner: owner.to_owned(),
                result: None,
                expires: now + lease,
            },
        );
        Ok(IdempotencyClaim::Claimed)
    }

    fn complete_now(&self, key: &str, owner: &str, result: Bytes, keep: Duration) -> bool {
        let now = Instant::now();
        let mut inner = self.lock();
        match inner.keys.get_mut(key) {
            Some(e) if e.owner == owner && e.expires > now => {
                e.result = Some(result);
                e.expires = now + keep;
                true
            }
            _ => false,
        }
    }

    fn release_now(&self, key: &str, owner: &str) {
        let mut inner = self.lock();
        if inner
            .keys
            .get(key)
            .is_some_and(|e| e.owner == owner && e.result.is_none())
        {
            inner.keys.remove(key);
        }
    }
}

impl IdempotencyStore for MemoryIdempotencyStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        owner: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<IdempotencyClaim, Error>> {
        Box::pin(std::future::ready(self.claim_now(
            key,
            fingerprint,
            owner,
            lease,
        )))
    }

    fn complete<'a>(
        &'a self,
        key: &'a str,
        owner: &'a str,
        result: Bytes,
        keep: Duration,
    ) -> BoxFuture<'a, Result<bool, Error>> {
        Box::pin(std::future::ready(Ok(
            self.complete_now(key, owner, result, keep)
        )))
    }

    fn release<'a>(&'a self, key: &'a str, owner: &'a str) -> BoxFuture<'a, Result<(), Error>> {
        self.release_now(key, owner);
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_store_refuses_new_keys_until_some_expire() {
        let store = MemoryIdempotencyStore::new(2);
        let long = Duration::from_secs(60);
        for k in ["a", "b"] {
            assert_eq!(
                store.claim_now(k, "f", "o", long).unwrap(),
                IdempotencyClaim::Claimed
            );
        }
        let e = store.claim_now("c", "f", "o", long).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable);
        // A known key still answers.
        assert_eq!(
            store.claim_now("a", "f", "p", long).unwrap(),
            IdempotencyClaim::InFlight
        );
        store.release_now("a", "o");
        assert_eq!(
            store.claim_now("c", "f", "o", long).unwrap(),
            IdempotencyClaim::Claimed
        );
    }

    #[test]
    fn a_lapsed_claim_is_taken_over_and_its_owner_cannot_complete() {
        let store = MemoryIdempotencyStore::default();
        let short = Duration::from_millis(1);
        store.claim_now("k", "f", "first", short).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(
            store
                .claim_now("k", "f", "second", Duration::from_secs(60))
                .unwrap(),
            IdempotencyClaim::Claimed
        );
        assert!(!store.complete_now("k", "first", Bytes::from_static(b"1"), short));
        assert!(store.complete_now(
            "k",
            "second",
            Bytes::from_static(b"2"),
            Duration::from_secs(60)
        ));
        assert_eq!(
            store
                .claim_now("k", "f", "third", Duration::from_secs(60))
                .unwrap(),
            IdempotencyClaim::Done(Bytes::from_static(b"2"))
        );
    }
}

//! Session ids this replica opened lately, so it opens each one once rather than on every
//! request (the AEAD open and the claims parse are most of a legacy request's session cost).
//!
//! The cache only saves CPU: it maps the exact id text to what [`session::unseal`] read
//! from it, which never changes for a given id. Everything that *can* change, or depends on
//! the request, is still checked on every request: the caller (another principal → 404),
//! the session's expiry, and what the shared [`SessionStore`](super::store::SessionStore)
//! holds (a `DELETE` on any replica → 404 here; `setLevel`, subscriptions), the latter
//! through `settings_cache`, which drops a session's settings as soon as a change is
//! announced on the bus. Any replica still serves any request: one that never saw an id
//! opens it from the token.
//!
//! Bounded: an entry lives at most [`ENTRY_TTL`] and never past its session's expiry; at
//! most [`MAX_ENTRIES`] entries and about [`MAX_BYTES`] bytes of ids and claims. When full,
//! expired entries go first, then arbitrary ones until half the room is free (each of
//! those sessions is opened from its token again on its next request).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::bounded::Bounded;
use super::session::{self, Refused, Session, Unsealed};
use crate::handler::Principal;
use crate::server::seal::StateKeys;

/// How long an opened id is remembered at most.
pub(crate) const ENTRY_TTL: Duration = Duration::from_secs(60);
/// The most ids remembered.
pub(crate) const MAX_ENTRIES: usize = 16 * 1024;
/// About the most bytes the remembered ids and claims take.
pub(crate) const MAX_BYTES: usize = 8 * 1024 * 1024;

/// What one entry costs besides the id and the claims (map slot, key box, bookkeeping).
const ENTRY_OVERHEAD: usize = 64;

struct Entry {
    unsealed: Arc<Unsealed>,
    /// When it goes: [`ENTRY_TTL`] after it was made, or at the session's expiry if sooner.
    until: SystemTime,
}

/// The replica's cache of opened session ids (see the [module docs](self)).
pub(crate) struct SessionCache {
    inner: Mutex<Bounded<Entry>>,
}

impl Default for SessionCache {
    fn default() -> Self {
        Self::new(MAX_ENTRIES, MAX_BYTES)
    }
}

impl std::fmt::Debug for SessionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCache")
            .field("entries", &self.lock().len())
            .finish_non_exhaustive()
    }
}

impl SessionCache {
    /// A cache of at most `max_entries` ids taking about `max_bytes`.
    pub(crate) fn new(max_entries: usize, max_bytes: usize) -> Self {
        SessionCache {
            inner: Mutex::new(Bounded::new(max_entries, max_bytes)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Bounded<Entry>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the session id `token` for a request by `principal` (valid for `ttl` from
    /// issue), from the cache when this replica opened it lately. Refuses exactly as
    /// unsealing it ([`session::unseal`]) and admitting the caller does.
    pub(crate) fn open(
        &self,
        keys: &StateKeys,
        token: Option<&str>,
        principal: Option<&Principal>,
        ttl: Duration,
    ) -> Result<Session, Refused> {
        self.open_at(keys, token, principal, ttl, SystemTime::now())
    }

    fn open_at(
        &self,
        keys: &StateKeys,
        token: Option<&str>,
        principal: Option<&Principal>,
        ttl: Duration,
        now: SystemTime,
    ) -> Result<Session, Refused> {
        let token = token.ok_or(Refused::Missing)?;
        // The caller is checked after the lock is released: only the lookup holds it.
        let hit = (self.lock().get(token))
            .filter(|e| e.until > now)
            .map(|e| e.unsealed.clone());
        if let Some(unsealed) = hit {
            return unsealed.admit(principal, now);
        }
        let unsealed = session::unseal(keys, token, ttl)?;
        let admitted = unsealed.admit(principal, now);
        if admitted.is_ok() {
            self.insert(token, unsealed, now);
        }
        admitted
    }

    fn insert(&self, token: &str, unsealed: Unsealed, now: SystemTime) {
        let size = token.len() + unsealed.size() + ENTRY_OVERHEAD;
        let entry = Entry {
            until: unsealed.expires().min(now + ENTRY_TTL),
            unsealed: Arc::new(unsealed),
        };
        self.lock().insert(token, entry, size, |e| e.until <= now);
    }

    /// How many ids it holds now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::session::tests::{DAY, K1, K2, ring};
    use super::*;
    use crate::legacy::store::{MemorySessionStore, SessionStore};
    use crate::legacy::{Legacy, Refusal};
    use crate::protocol::ClientCapabilities;
    use crate::server::Server;

    fn issue(keys: &StateKeys, principal: Option<&Principal>) -> String {
        let caps = ClientCapabilities::default();
        session::issue(keys, "2025-11-25", &caps, None, principal).unwrap()
    }

    #[test]
    fn an_id_is_opened_once_and_still_checked_on_every_request() {
        let keys = ring(K1);
        let alice = Principal::new("alice").with_issuer("https://as");
        let bob = Principal::new("bob").with_issuer("https://as");
        let token = issue(&keys, Some(&alice));
        let cache = SessionCache::default();
        let now = SystemTime::now();
        let first = cache
            .open_at(&keys, Some(&token), Some(&alice), DAY, now)
            .unwrap();
        assert_eq!(cache.len(), 1);
        // Served from the cache: a ring that could not open it does not matter now.
        let again = cache
            .open_at(&ring(K2), Some(&token), Some(&alice), DAY, now)
            .unwrap();
        assert_eq!(again.key, first.key);
        // The caller and the expiry are checked on a hit as on a miss.
        for (who, at, why) in [
            (Some(&bob), now, "it belongs to another caller"),
            (None, now, "it belongs to another caller"),
            (Some(&alice), first.expires, "expired"),
        ] {
            assert_eq!(
                cache
                    .open_at(&keys, Some(&token), who, DAY, at)
                    .unwrap_err(),
                Refused::Unknown(why)
            );
        }
        assert_eq!(
            cache
                .open_at(&keys, None, Some(&alice), DAY, now)
                .unwrap_err(),
            Refused::Missing
        );
    }

    #[test]
    fn entries_live_a_short_while_and_refusals_are_not_kept() {
        let keys = ring(K1);
        let token = issue(&keys, None);
        let cache = SessionCache::default();
        let now = SystemTime::now();
        cache.open_at(&keys, Some(&token), None, DAY, now).unwrap();
        // Past the entry's lifetime the id is opened from the token again: with a ring that
        // cannot open it, it is refused.
        let later = now + ENTRY_TTL + Duration::from_secs(1);
        assert!(
            cache
                .open_at(&ring(K2), Some(&token), None, DAY, later)
                .is_err()
        );
        assert!(cache.open_at(&keys, Some(&token), None, DAY, later).is_ok());
        let cache = SessionCache::default();
        for bad in [format!("{token}x"), "nonsense".to_owned()] {
            assert!(cache.open_at(&keys, Some(&bad), None, DAY, now).is_err());
        }
        let expired = now + DAY + Duration::from_secs(1);
        assert!(
            cache
                .open_at(&keys, Some(&token), None, DAY, expired)
                .is_err()
        );
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn it_stays_within_its_bounds() {
        let keys = ring(K1);
        let cache = SessionCache::new(8, MAX_BYTES);
        let now = SystemTime::now();
        let tokens: Vec<String> = (0..40).map(|_| issue(&keys, None)).collect();
        for t in &tokens {
            cache.open_at(&keys, Some(t), None, DAY, now).unwrap();
            assert!(cache.len() <= 8);
        }
        // Every id still opens, from the cache or from its token.
        for t in &tokens {
            cache.open_at(&keys, Some(t), None, DAY, now).unwrap();
        }
        let one = token_size(&keys, &tokens[0]);
        let by_bytes = SessionCache::new(1000, one * 5);
        for t in &tokens {
            by_bytes.open_at(&keys, Some(t), None, DAY, now).unwrap();
            let (bytes, counted) = by_bytes.lock().bytes();
            assert!(bytes <= one * 5);
            assert_eq!(bytes, counted);
        }
        assert!(by_bytes.len() >= 2);
    }

    fn token_size(keys: &StateKeys, token: &str) -> usize {
        token.len() + session::unseal(keys, token, DAY).unwrap().size() + ENTRY_OVERHEAD
    }

    #[tokio::test]
    async fn a_cached_session_deleted_in_the_store_is_refused() {
        let store = Arc::new(MemorySessionStore::default());
        let server = Server::builder()
            .session_store(store.clone())
            .build()
            .unwrap();
        let legacy = Legacy::of(&server).unwrap();
        let token = issue(server.sealer().keys(), None);
        let (session, _) = legacy.session(None, Some(&token), None).await.unwrap();
        assert_eq!(legacy.state.sessions.len(), 1, "cached");
        // Revoked in the shared store (as a DELETE on another replica does): refused here at
        // once, though this replica holds the opened id.
        store.revoke(&session.key, session.expires).await.unwrap();
        let refused = legacy.session(None, Some(&token), None).await.unwrap_err();
        assert_eq!(refused.refusal, Some(Refusal::Unknown));
        assert_eq!(legacy.state.sessions.len(), 1);
    }
}

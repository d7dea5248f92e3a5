//! Verified tokens, remembered by a digest of the token (never the token itself) until the
//! token expires, at most `max_ttl`, and at most `capacity` of them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};

use crate::handler::Principal;

/// A SHA-256 digest of a token.
pub(crate) type TokenDigest = [u8; 32];

struct Entry {
    principal: Principal,
    until: Instant,
}

/// A bounded cache of verification results.
pub(crate) struct TokenCache {
    max_ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<TokenDigest, Entry>>,
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl TokenCache {
    /// A cache keeping entries at most `max_ttl` (zero: keeps nothing), at most `capacity`.
    pub(crate) fn new(max_ttl: Duration, capacity: usize) -> Self {
        TokenCache {
            max_ttl,
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The digest `token` is remembered by.
    pub(crate) fn digest(token: &str) -> TokenDigest {
        Sha256::digest(token.as_bytes()).into()
    }

    /// The principal of a token verified before and still fresh.
    pub(crate) fn get(&self, digest: &TokenDigest) -> Option<Principal> {
        if self.max_ttl.is_zero() {
            return None;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(digest) {
            Some(e) if e.until > Instant::now() => Some(e.principal.clone()),
            Some(_) => {
                entries.remove(digest);
                None
            }
            None => None,
        }
    }

    /// Remembers a verified token whose `exp` (Unix seconds) is `exp`, if any.
    pub(crate) fn put(&self, digest: TokenDigest, principal: &Principal, exp: Option<i64>) {
        let ttl = match exp {
            Some(exp) => {
                let left = u64::try_from(exp.saturating_sub(unix_now())).unwrap_or(0);
                Duration::from_secs(left).min(self.max_ttl)
            }
            None => self.max_ttl,
        };
        if !ttl.is_zero() {
            self.insert(digest, principal, Instant::now() + ttl);
        }
    }

    fn insert(&self, digest: TokenDigest, principal: &Principal, until: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity {
            let now = Instant::now();
            entries.retain(|_, e| e.until > now);
        }
        if entries.len() >= self.capacity {
            // Still full: drop the entry that would expire first.
            if let Some(k) = entries.iter().min_by_key(|(_, e)| e.until).map(|(k, _)| *k) {
                entries.remove(&k);
            }
        }
        entries.insert(
            digest,
            Entry {
                principal: principal.clone(),
                until,
            },
        );
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_in_size_and_time() {
        let c = TokenCache::new(Duration::from_secs(60), 2);
        let later = Instant::now() + Duration::from_secs(60);
        for n in 0u8..5 {
            c.insert(
                [n; 32],
                &Principal::new("u"),
                later + Duration::from_secs(n.into()),
            );
        }
        assert_eq!(c.len(), 2);
        assert!(
            c.get(&[4; 32]).is_some(),
            "the latest-expiring entries stay"
        );
        assert!(c.get(&[0; 32]).is_none());
        c.insert([9; 32], &Principal::new("u"), Instant::now());
        assert!(c.get(&[9; 32]).is_none(), "expired entries are not served");
        c.put([7; 32], &Principal::new("u"), Some(unix_now() - 5));
        assert!(c.get(&[7; 32]).is_none(), "expired tokens are not stored");
        c.put([8; 32], &Principal::new("u"), Some(unix_now() + 600));
        assert!(c.get(&[8; 32]).is_some());
        let off = TokenCache::new(Duration::ZERO, 10);
        off.put([1; 32], &Principal::new("u"), None);
        assert!(off.get(&[1; 32]).is_none(), "a zero TTL keeps nothing");
        assert_ne!(TokenCache::digest("a"), TokenCache::digest("b"));
    }
}

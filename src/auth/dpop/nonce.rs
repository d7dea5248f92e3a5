//! Server nonces (RFC 9449 §8, §9) that any replica accepts without shared state: a nonce
//! is the number of the current time window sealed with the deployment's key ring (the
//! same [`StateKeys`] that seal `requestState`, for its own purpose, so neither token opens
//! as the other). A nonce is accepted during its window and the next one, so it lives
//! between one and two lifetimes; each replica caches the current window's nonce.

use std::sync::Mutex;
use std::time::Duration;

use crate::auth::cache::unix_now;
use crate::server::seal::Purpose;
use crate::settings::StateKeys;

/// Mints and checks nonces.
pub(crate) struct Nonces {
    keys: StateKeys,
    lifetime_secs: i64,
    /// The current window and its nonce.
    current: Mutex<Option<(i64, String)>>,
}

impl std::fmt::Debug for Nonces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nonces")
            .field("lifetime_secs", &self.lifetime_secs)
            .finish_non_exhaustive()
    }
}

impl Nonces {
    pub(crate) fn new(keys: StateKeys, lifetime: Duration) -> Self {
        Nonces {
            keys,
            lifetime_secs: i64::try_from(lifetime.as_secs().max(1)).unwrap_or(i64::MAX),
            current: Mutex::new(None),
        }
    }

    fn window(&self, now: i64) -> i64 {
        now.div_euclid(self.lifetime_secs)
    }

    /// The nonce to hand out now.
    pub(crate) fn current(&self) -> String {
        self.current_at(unix_now())
    }

    fn current_at(&self, now: i64) -> String {
        let window = self.window(now);
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        match &*current {
            Some((w, nonce)) if *w == window => nonce.clone(),
            _ => {
                let nonce = self
                    .keys
                    .seal_bytes(Purpose::DPOP_NONCE, &window.to_be_bytes())
                    .unwrap_or_default();
                *current = Some((window, nonce.clone()));
                nonce
            }
        }
    }

    /// Whether `nonce` was minted by a replica holding the same keys, in this window or the
    /// one before.
    pub(crate) fn is_valid(&self, nonce: &str) -> bool {
        self.is_valid_at(nonce, unix_now())
    }

    fn is_valid_at(&self, nonce: &str, now: i64) -> bool {
        let Ok(plain) = self.keys.open_bytes(Purpose::DPOP_NONCE, nonce) else {
            return false;
        };
        let Ok(bytes) = <[u8; 8]>::try_from(plain.as_slice()) else {
            return false;
        };
        let age = self.window(now) - i64::from_be_bytes(bytes);
        (0..=1).contains(&age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    fn nonces() -> Nonces {
        Nonces::new(KEYS.parse().unwrap(), Duration::from_secs(60))
    }

    #[test]
    fn a_nonce_holds_on_another_replica_for_one_to_two_lifetimes() {
        let (a, b) = (nonces(), nonces());
        let t = 6_000;
        let n = a.current_at(t);
        assert_eq!(a.current_at(t + 10), n, "cached within the window");
        assert!(b.is_valid_at(&n, t), "another replica with the same keys");
        assert!(b.is_valid_at(&n, t + 119));
        assert!(!b.is_valid_at(&n, t + 120), "two windows later");
        assert!(!b.is_valid_at(&n, t - 60), "from the future");
        assert_ne!(a.current_at(t + 60), n, "a new window, a new nonce");
        let other = Nonces::new(
            "k1:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA="
                .parse()
                .unwrap(),
            Duration::from_secs(60),
        );
        assert!(!other.is_valid_at(&n, t), "other keys");
        assert!(!b.is_valid_at("not-a-nonce", t));
        // A requestState sealed with the same keys is not a nonce.
        let keys: StateKeys = KEYS.parse().unwrap();
        let state = keys
            .seal_bytes(Purpose::REQUEST_STATE, &(t / 60).to_be_bytes())
            .unwrap();
        assert!(!b.is_valid_at(&state, t));
    }
}

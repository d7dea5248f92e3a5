//! `requestState`: what the token carries (method, params digest, principal digest, expiry,
//! an optional single-use id, the handler's state), sealing it for a [`Binding`] and
//! opening it against one, with a `-32602` naming the reason for every refusal.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::binding::Binding;
use super::keys::StateKeys;
use super::sealed::{Purpose, Refused};
use super::{MAX_STATE_BYTES, MAX_TOKEN_BYTES};
use crate::Error;
use crate::protocol::ErrorObject;

/// The plaintext of a `requestState` token.
#[derive(Serialize, Deserialize)]
struct Sealed<'a> {
    m: &'a str,
    d: &'a str,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<&'a str>,
    x: u64,
    /// The id of a single-use state, claimed in the replay store when it is opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    u: Option<String>,
    s: Value,
}

/// A state opened from a token.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) state: Value,
    /// Set for a single-use state: what must be claimed before the retry runs.
    pub(crate) single_use: Option<SingleUse>,
}

/// The replay-store claim a single-use state needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SingleUse {
    pub(crate) id: String,
    pub(crate) expires: SystemTime,
}

/// The `-32602` answer to a single-use state that was already used.
pub(crate) fn replayed() -> ErrorObject {
    rejected(
        "replayed",
        "it was already used, and this state is single-use; start the request again without requestState",
    )
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The reasons a state is refused, as fixed strings (for metric labels).
const REASONS: &[&str] = &[
    "malformed",
    "tampered",
    "unknown_key",
    "wrong_method",
    "wrong_params",
    "wrong_principal",
    "expired",
    "too_large",
    "replayed",
];

/// `reason` as one of the fixed [`REASONS`].
pub(crate) fn reason_label(reason: &str) -> Option<&'static str> {
    REASONS.iter().copied().find(|r| *r == reason)
}

fn rejected(reason: &'static str, detail: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params_with(
        format!("Invalid requestState: {}", detail.into()),
        json!({ "reason": reason }),
    )
}

fn malformed() -> ErrorObject {
    rejected("malformed", "it is not a token this server issued")
}

impl StateKeys {
    /// Seals `state` for the request `binding` describes, valid for `ttl`.
    /// A `single_use` state carries a random id to claim when it is opened.
    pub(crate) fn seal(
        &self,
        binding: &Binding,
        state: Value,
        ttl: Duration,
        single_use: bool,
    ) -> Result<String, Error> {
        let id = single_use.then(|| {
            let mut raw = [0u8; 16];
            OsRng.fill_bytes(&mut raw);
            URL_SAFE_NO_PAD.encode(raw)
        });
        let plain = serde_json::to_vec(&Sealed {
            m: binding.method,
            d: &binding.digest,
            p: binding.principal.as_deref(),
            x: now_secs().saturating_add(ttl.as_secs()),
            u: id,
            s: state,
        })
        .map_err(|e| Error::internal(format!("requestState did not serialize: {e}")))?;
        if plain.len() > MAX_STATE_BYTES {
            return Err(Error::internal(format!(
                "requestState is {} bytes; the limit is {MAX_STATE_BYTES}",
                plain.len()
            )));
        }
        self.seal_bytes(Purpose::REQUEST_STATE, &plain)
    }

    /// Opens a token sealed for the request `binding` describes, returning the handler state.
    pub(crate) fn open(&self, token: &str, binding: &Binding) -> Result<Opened, ErrorObject> {
        self.open_at(token, binding, now_secs())
    }

    fn open_at(&self, token: &str, binding: &Binding, now: u64) -> Result<Opened, ErrorObject> {
        let plain =
            self.open_bytes(Purpose::REQUEST_STATE, token)
                .map_err(|refused| match refused {
                    Refused::TooLarge => rejected(
                        "too_large",
                        format!("it is longer than {MAX_TOKEN_BYTES} bytes"),
                    ),
                    Refused::Malformed => malformed(),
                    Refused::UnknownKey(kid) => rejected(
                        "unknown_key",
                        format!("it was sealed with key {kid:?}, which this server does not hold"),
                    ),
                    Refused::Tampered => rejected(
                        "tampered",
                        "it failed verification (altered, or not issued by this server)",
                    ),
                })?;
        let opened: Sealed<'_> = serde_json::from_slice(&plain).map_err(|_| malformed())?;
        if opened.m != binding.method {
            return Err(rejected(
                "wrong_method",
                format!("it was issued for {}, not {}", opened.m, binding.method),
            ));
        }
        if opened.d != binding.digest {
            return Err(rejected(
                "wrong_params",
                "it was issued for a request with other params (name, URI or arguments differ)",
            ));
        }
        if opened.p != binding.principal.as_deref() {
            return Err(rejected(
                "wrong_principal",
                "it was issued to a different caller",
            ));
        }
        if opened.x < now {
            return Err(rejected(
                "expired",
                "it has expired; start the request again without requestState",
            ));
        }
        let single_use = opened.u.map(|id| SingleUse {
            id,
            expires: UNIX_EPOCH + Duration::from_secs(opened.x),
        });
        Ok(Opened {
            state: opened.s,
            single_use,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::Principal;
    use crate::server::seal::DEFAULT_STATE_TTL;

    fn ring(spec: &str) -> StateKeys {
        spec.parse().unwrap()
    }

    const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const K2: &str = "k2:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA=";

    use crate::server::seal::binding::example as binding;

    fn reason(e: &ErrorObject) -> String {
        e.data.as_ref().unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn round_trip_and_canonical_arguments() {
        let keys = ring(K1);
        let token = keys
            .seal(&binding(), json!({"step": 2}), DEFAULT_STATE_TTL, false)
            .unwrap();
        assert!(token.starts_with("v1.k1."));
        let reordered = Binding::new(
            "tools/call",
            "book",
            &json!({"a": [1, {"x": 1, "y": 2}], "b": 1}),
            None,
        );
        assert_eq!(
            keys.open(&token, &reordered).unwrap().state,
            json!({"step": 2})
        );
    }

    #[test]
    fn every_tampering_is_rejected() {
        let keys = ring(K1);
        let token = keys
            .seal(&binding(), json!(1), DEFAULT_STATE_TTL, false)
            .unwrap();
        let b = binding();
        let appended = format!("{token}-TAMPERED");
        assert_eq!(reason(&keys.open(&appended, &b).unwrap_err()), "malformed");
        let mut flipped = token.clone().into_bytes();
        let last = flipped.len() - 5;
        flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
        let flipped = String::from_utf8(flipped).unwrap();
        assert_eq!(reason(&keys.open(&flipped, &b).unwrap_err()), "tampered");
        let relabelled = token.replacen("v1.k1.", "v1.k2.", 1);
        assert_eq!(
            reason(
                &ring(&format!("{K2},{K1}"))
                    .open(&relabelled, &b)
                    .unwrap_err()
            ),
            "tampered"
        );
        assert_eq!(
            reason(&ring(K2).open(&token, &b).unwrap_err()),
            "unknown_key"
        );
        assert_eq!(
            reason(&keys.open("v2.k1.AAAA", &b).unwrap_err()),
            "malformed"
        );
        assert_eq!(
            reason(&keys.open(&"x".repeat(MAX_TOKEN_BYTES + 1), &b).unwrap_err()),
            "too_large"
        );
    }

    #[test]
    fn bound_to_method_params_principal_and_expiry() {
        let keys = ring(K1);
        let alice = Principal::new("alice").with_issuer("https://as");
        let bob = Principal::new("bob").with_issuer("https://as");
        let args = json!({});
        let for_alice = Binding::new("tools/call", "t", &args, Some(&alice));
        let token = keys
            .seal(&for_alice, json!(null), DEFAULT_STATE_TTL, false)
            .unwrap();
        assert!(keys.open(&token, &for_alice).is_ok());
        let cases = [
            (
                Binding::new("prompts/get", "t", &args, Some(&alice)),
                "wrong_method",
            ),
            (
                Binding::new("tools/call", "u", &args, Some(&alice)),
                "wrong_params",
            ),
            (
                Binding::new("tools/call", "t", &json!({"a": 1}), Some(&alice)),
                "wrong_params",
            ),
            (
                Binding::new("tools/call", "t", &args, Some(&bob)),
                "wrong_principal",
            ),
            (
                Binding::new("tools/call", "t", &args, None),
                "wrong_principal",
            ),
        ];
        for (b, why) in cases {
            assert_eq!(reason(&keys.open(&token, &b).unwrap_err()), why);
        }
        let short = keys
            .seal(&for_alice, json!(null), Duration::from_secs(60), false)
            .unwrap();
        let later = now_secs() + 61;
        assert_eq!(
            reason(&keys.open_at(&short, &for_alice, later).unwrap_err()),
            "expired"
        );
    }

    #[test]
    fn rotation_old_keys_open_newest_seals() {
        let old = ring(K1);
        let token = old
            .seal(&binding(), json!("old"), DEFAULT_STATE_TTL, false)
            .unwrap();
        let rotated = ring(&format!("{K2},{K1}"));
        assert_eq!(
            rotated.open(&token, &binding()).unwrap().state,
            json!("old")
        );
        let fresh = rotated
            .seal(&binding(), json!("new"), DEFAULT_STATE_TTL, false)
            .unwrap();
        assert!(fresh.starts_with("v1.k2."));
        assert_eq!(
            reason(&old.open(&fresh, &binding()).unwrap_err()),
            "unknown_key"
        );
    }

    #[test]
    fn single_use_states_carry_a_fresh_id_to_claim() {
        let keys = ring(K1);
        let plain = keys
            .seal(&binding(), json!(1), DEFAULT_STATE_TTL, false)
            .unwrap();
        assert_eq!(keys.open(&plain, &binding()).unwrap().single_use, None);
        let once = |n| {
            keys.seal(&binding(), json!(n), DEFAULT_STATE_TTL, true)
                .unwrap()
        };
        let (a, b) = (once(1), once(1));
        let (a, b) = (
            keys.open(&a, &binding()).unwrap().single_use.unwrap(),
            keys.open(&b, &binding()).unwrap().single_use.unwrap(),
        );
        assert_ne!(a.id, b.id, "each single-use state has its own id");
        assert!(a.expires > SystemTime::now());
        assert!(reason_label("replayed").is_some());
    }

    #[test]
    fn size_limit_and_key_parsing() {
        let keys = ring(K1);
        let big = json!("x".repeat(MAX_STATE_BYTES));
        assert!(
            keys.seal(&binding(), big, DEFAULT_STATE_TTL, false)
                .is_err()
        );
        for bad in [
            "",
            "k1",
            "k1:zz",
            "k1:AAAA",
            "bad id:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        ] {
            assert!(bad.parse::<StateKeys>().is_err(), "{bad}");
        }
        assert!(format!("{K1},{K1}").parse::<StateKeys>().is_err());
        assert!(!format!("{keys:?}").contains("AAEC"));
    }
}

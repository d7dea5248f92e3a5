//! Sealed `requestState`: handler state carried by the client between the rounds of a
//! multi-round-trip request, encrypted and authenticated so that any replica holding the same
//! key ring can open it and nobody else can read or alter it.
//!
//! # Token format
//!
//! ```text
//! v1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>
//! ```
//!
//! - `kid`: the id of the key that sealed it (1–16 of `A-Z a-z 0-9 _ -`).
//! - AEAD: XChaCha20-Poly1305, 256-bit key, a random 192-bit nonce per token, 128-bit tag;
//!   the associated data is `stateless-mcp/requestState/v1.<kid>`.
//! - Plaintext: compact JSON `{"m":method,"d":params digest,"p":principal digest?,
//!   "x":expiry (Unix seconds),"s":handler state}`. The params digest is SHA-256 over the
//!   method, the tool/prompt name or resource URI and the canonical JSON of the arguments
//!   (`inputResponses` and `requestState` excluded), truncated to 128 bits; the principal
//!   digest likewise over the caller's issuer, subject and client id.
//! - Limits: at most [`MAX_STATE_BYTES`] of plaintext when sealing (a bigger state is a
//!   handler bug, answered `-32603`), and at most [`MAX_TOKEN_BYTES`] of token when opening
//!   (longer is refused before any decoding).
//!
//! Opening checks, in order: shape, key id known, authentication tag, method, params digest,
//! principal, expiry. Every failure is `-32602` naming the reason.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::rand_core::RngCore as _;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::handler::Principal;
use crate::protocol::ErrorObject;

/// The most handler state (serialized JSON plus the binding, in bytes) one token may carry.
pub const MAX_STATE_BYTES: usize = 8 * 1024;
/// The longest `requestState` the server will try to open.
pub const MAX_TOKEN_BYTES: usize = 12 * 1024;
/// How long a sealed state stays valid unless configured otherwise.
pub const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);

const VERSION: &str = "v1";
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;
const KEY_LEN: usize = 32;
const MAX_KID_LEN: usize = 16;

/// One sealing key with its id.
#[derive(Clone)]
struct StateKey {
    id: String,
    cipher: XChaCha20Poly1305,
}

/// The key ring that seals and opens `requestState`: the first key seals, every key opens.
///
/// Every replica must hold the same ring. Parse one from the `KID:BASE64KEY,…` form (newest
/// first, 32-byte keys in standard or URL-safe base64):
///
/// ```
/// use stateless_mcp::StateKeys;
///
/// let keys: StateKeys = "k2:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,\
///                        k1:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA="
///     .parse()
///     .unwrap();
/// assert_eq!(keys.ids().collect::<Vec<_>>(), ["k2", "k1"]);
/// ```
#[derive(Clone)]
pub struct StateKeys {
    keys: Vec<StateKey>,
    generated: bool,
}

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateKeys")
            .field("ids", &self.ids().collect::<Vec<_>>())
            .field("generated", &self.generated)
            .finish()
    }
}

/// Why a key ring could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateKeysError(String);

impl fmt::Display for StateKeysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StateKeysError {}

fn valid_kid(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= MAX_KID_LEN
        && kid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl StateKeys {
    /// A ring of one random key, for a single process. Tokens it seals cannot be opened by
    /// any other process: several replicas need a shared ring.
    pub fn generate() -> Self {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        StateKeys {
            keys: vec![StateKey {
                id: "local".into(),
                cipher: XChaCha20Poly1305::new(&key),
            }],
            generated: true,
        }
    }

    /// A ring from `(id, 32-byte key)` pairs, newest first.
    pub fn from_keys<I, K>(keys: I) -> Result<Self, StateKeysError>
    where
        I: IntoIterator<Item = (K, [u8; KEY_LEN])>,
        K: Into<String>,
    {
        let mut ring = Vec::new();
        for (id, bytes) in keys {
            let id = id.into();
            if !valid_kid(&id) {
                return Err(StateKeysError(format!(
                    "state key id {id:?} must be 1-{MAX_KID_LEN} characters of A-Z a-z 0-9 _ -"
                )));
            }
            if ring.iter().any(|k: &StateKey| k.id == id) {
                return Err(StateKeysError(format!("state key id {id:?} appears twice")));
            }
            ring.push(StateKey {
                id,
                cipher: XChaCha20Poly1305::new(Key::from_slice(&bytes)),
            });
        }
        if ring.is_empty() {
            return Err(StateKeysError("the state key list is empty".into()));
        }
        Ok(StateKeys {
            keys: ring,
            generated: false,
        })
    }

    /// The key ids, newest (the sealing key) first.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|k| k.id.as_str())
    }

    /// Whether this ring was generated in-process (not shared with other replicas).
    pub fn is_generated(&self) -> bool {
        self.generated
    }
}

impl FromStr for StateKeys {
    type Err = StateKeysError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut pairs = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (id, b64) = item.split_once(':').ok_or_else(|| {
                StateKeysError(format!(
                    "state key {:?} is not KID:BASE64KEY",
                    item.chars().take(MAX_KID_LEN).collect::<String>()
                ))
            })?;
            let bytes = [STANDARD, URL_SAFE]
                .iter()
                .find_map(|e| e.decode(b64.trim()).ok())
                .or_else(|| URL_SAFE_NO_PAD.decode(b64.trim()).ok())
                .ok_or_else(|| StateKeysError(format!("state key {id:?} is not valid base64")))?;
            let key: [u8; KEY_LEN] = bytes.try_into().map_err(|b: Vec<u8>| {
                StateKeysError(format!(
                    "state key {id:?} has {} bytes; it must have {KEY_LEN}",
                    b.len()
                ))
            })?;
            pairs.push((id.to_owned(), key));
        }
        StateKeys::from_keys(pairs)
    }
}

/// What a sealed state is bound to: the request it belongs to and its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    digest: String,
    principal: Option<String>,
}

fn digest16(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    URL_SAFE_NO_PAD.encode(&h.finalize()[..16])
}

/// Writes `value` as JSON with object keys sorted, whatever map order serde_json keeps.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

impl Binding {
    /// Binds to `method`, the request's name or URI, its arguments and its caller.
    #[cfg(test)]
    fn new(
        method: &'static str,
        target: &str,
        arguments: &Value,
        principal: Option<&Principal>,
    ) -> Self {
        Self::for_caller(
            method,
            target,
            arguments,
            principal.map(Principal::binding).as_deref(),
        )
    }

    /// Binds to `method`, the request's name or URI, its arguments and its caller (given by
    /// its [`Principal::binding`]).
    fn for_caller(
        method: &'static str,
        target: &str,
        arguments: &Value,
        caller: Option<&str>,
    ) -> Self {
        let mut args = String::new();
        canonical(arguments, &mut args);
        Binding {
            method,
            digest: digest16(&[method.as_bytes(), target.as_bytes(), args.as_bytes()]),
            principal: caller.map(|c| digest16(&[c.as_bytes()])),
        }
    }
}

/// What a binding is made of, kept until a binding is actually needed: to open a
/// `requestState` the request carries, or to seal one the handler returns. Most requests need
/// neither, and then the arguments are never canonicalized or hashed.
#[derive(Debug)]
pub(crate) struct PendingBinding {
    pub(crate) method: &'static str,
    target: String,
    arguments: PendingArguments,
    /// The caller's [`Principal::binding`] (not the whole principal: its claims are not
    /// needed, and this is made on every request that may seal or open a state).
    caller: Option<String>,
}

/// The arguments of a pending binding.
#[derive(Debug)]
pub(crate) enum PendingArguments {
    /// Already parsed (e.g. prompt arguments, or none for a resource).
    Value(Value),
    /// The raw JSON text of `params.arguments` (absent or `null` mean `{}`).
    Raw(Option<bytes::Bytes>),
}

impl PendingBinding {
    pub(crate) fn new(
        method: &'static str,
        target: String,
        arguments: PendingArguments,
        principal: Option<&Principal>,
    ) -> Self {
        PendingBinding {
            method,
            target,
            arguments,
            caller: principal.map(Principal::binding),
        }
    }

    /// The binding: canonical arguments and digests, computed now.
    pub(crate) fn resolve(&self) -> Binding {
        let parsed;
        let arguments = match &self.arguments {
            PendingArguments::Value(v) => v,
            PendingArguments::Raw(raw) => {
                parsed = match raw.as_deref().map(serde_json::from_slice::<Value>) {
                    Some(Ok(v)) if !v.is_null() => v,
                    _ => Value::Object(serde_json::Map::new()),
                };
                &parsed
            }
        };
        Binding::for_caller(self.method, &self.target, arguments, self.caller.as_deref())
    }
}

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

fn aad(kid: &str) -> Vec<u8> {
    format!("stateless-mcp/requestState/{VERSION}.{kid}").into_bytes()
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
        let key = &self.keys[0];
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
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let aad = aad(&key.id);
        let sealed = key
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: &plain,
                    aad: &aad,
                },
            )
            .map_err(|_| Error::internal("requestState could not be sealed"))?;
        let mut blob = Vec::with_capacity(NONCE_LEN + sealed.len());
        blob.extend_from_slice(&nonce);
        blob.extend_from_slice(&sealed);
        Ok(format!(
            "{VERSION}.{}.{}",
            key.id,
            URL_SAFE_NO_PAD.encode(blob)
        ))
    }

    /// Opens a token sealed for the request `binding` describes, returning the handler state.
    pub(crate) fn open(&self, token: &str, binding: &Binding) -> Result<Opened, ErrorObject> {
        self.open_at(token, binding, now_secs())
    }

    fn open_at(&self, token: &str, binding: &Binding, now: u64) -> Result<Opened, ErrorObject> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(rejected(
                "too_large",
                format!("it is longer than {MAX_TOKEN_BYTES} bytes"),
            ));
        }
        let malformed = || rejected("malformed", "it is not a token this server issued");
        let mut parts = token.splitn(3, '.');
        let (Some(VERSION), Some(kid), Some(body)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed());
        };
        let blob = URL_SAFE_NO_PAD.decode(body).map_err(|_| malformed())?;
        if blob.len() < NONCE_LEN + TAG_LEN || !valid_kid(kid) {
            return Err(malformed());
        }
        let key = self.keys.iter().find(|k| k.id == kid).ok_or_else(|| {
            rejected(
                "unknown_key",
                format!("it was sealed with key {kid:?}, which this server does not hold"),
            )
        })?;
        let (nonce, sealed) = blob.split_at(NONCE_LEN);
        let aad = aad(kid);
        let plain = key
            .cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .map_err(|_| {
                rejected(
                    "tampered",
                    "it failed verification (altered, or not issued by this server)",
                )
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

    fn ring(spec: &str) -> StateKeys {
        spec.parse().unwrap()
    }

    const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const K2: &str = "k2:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA=";

    fn binding() -> Binding {
        Binding::new(
            "tools/call",
            "book",
            &json!({"b": 1, "a": [1, {"y": 2, "x": 1}]}),
            None,
        )
    }

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
    fn pending_bindings_resolve_like_eager_ones() {
        let raw = |t: &str| PendingArguments::Raw(Some(bytes::Bytes::from(t.to_owned())));
        let pending = |args| PendingBinding::new("tools/call", "book".into(), args, None);
        assert_eq!(
            pending(raw(r#"{"a": [1, {"x": 1, "y": 2}], "b": 1}"#)).resolve(),
            binding()
        );
        let empty = Binding::new("tools/call", "book", &json!({}), None);
        for args in [PendingArguments::Raw(None), raw("null"), raw("{}")] {
            assert_eq!(pending(args).resolve(), empty);
        }
        assert_eq!(
            pending(PendingArguments::Value(
                json!({"b": 1, "a": [1, {"y": 2, "x": 1}]})
            ))
            .resolve(),
            binding()
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

//! The legacy session id: a token sealed with the `--state-keys` ring for its own purpose
//! (`legacySession`), so it never opens as a `requestState` nor the other way round.
//!
//! ```text
//! Mcp-Session-Id: v1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>
//! plaintext: {"v":version,"c":client capabilities,"i":clientInfo?,"p":principal digest?,
//!             "t":issued (Unix seconds),"n":base64url(16 random bytes)}
//! ```
//!
//! Any replica holding the ring opens it; nothing about the session is kept anywhere else
//! except what changes later (the [`SessionStore`](super::store::SessionStore)). Its key
//! there is the token's sealed random part `n`: unique per `initialize`, readable only by
//! a holder of the ring, and bound to the token by the AEAD tag, so no digest of the whole
//! token is needed. Opening refuses, and the client must initialize again (HTTP 404): a
//! token that does not open (tampered, another key ring, another purpose), one older than
//! the session TTL, one presented by another principal than the one that initialized, and
//! one issued before the store was keyed by `n` (its 12-byte `n`: its settings and a
//! `DELETE` were recorded under another key, so it must not open as a fresh session).
//!

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore as _;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::handler::Principal;
use crate::protocol::{ClientCapabilities, ClientIdentity, Implementation};
use crate::server::seal::{Purpose, StateKeys, digest16};

/// The most session plaintext (capabilities and clientInfo, mostly) one id may carry.
pub(crate) const MAX_SESSION_BYTES: usize = 4 * 1024;

/// Random bytes in `n`, the session's store key.
const KEY_BYTES: usize = 16;
/// The length of `n` as base64url without padding.
const KEY_CHARS: usize = (KEY_BYTES * 4).div_ceil(3);

/// What the token carries.
#[derive(Serialize, Deserialize)]
struct Claims {
    v: String,
    c: ClientCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    i: Option<Implementation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<String>,
    t: u64,
    n: String,
}

/// Why a session past its hard limit is refused.
pub(crate) const EXPIRED: &str = "expired";
/// Why a session unused for longer than the idle limit is refused.
pub(crate) const IDLE: &str = "idle for longer than the idle limit";

/// An opened legacy session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// Its key in the session store: the token's sealed random part.
    pub(crate) key: Arc<str>,
    /// The negotiated protocol version, what the client declared at `initialize` and who
    /// it said it is: shared by every request of the session (and the cached opened id).
    pub(crate) identity: Arc<ClientIdentity>,
    /// When it expires at the latest (issued + the hard limit, `session_ttl`).
    pub(crate) expires: SystemTime,
    /// When it was issued (`initialize`), whole seconds.
    pub(crate) issued: SystemTime,
}

/// Why a request gets no session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No `Mcp-Session-Id` on a request that needs one.
    Missing,
    /// The id names no live session of this caller (the client initializes again).
    /// The reason is for logs and metrics only.
    Unknown(&'static str),
}

impl Refused {
    /// What the client is told.
    pub(crate) fn message(self) -> String {
        match self {
            Refused::Missing => {
                "Bad Request: this request needs the Mcp-Session-Id header that initialize returned"
                    .to_owned()
            }
            Refused::Unknown(why) => {
                format!("Session not found ({why}): send initialize to start a new session")
            }
        }
    }
}

fn caller(principal: Option<&Principal>) -> Option<String> {
    principal.map(|p| digest16(&[p.binding().as_bytes()]))
}

fn secs(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Issues a session id for a client that initialized with `version`, `capabilities` and
/// `client_info`, bound to `principal`.
pub(crate) fn issue(
    keys: &StateKeys,
    version: &str,
    capabilities: &ClientCapabilities,
    client_info: Option<&Implementation>,
    principal: Option<&Principal>,
) -> Result<String, Error> {
    let mut nonce = [0u8; KEY_BYTES];
    OsRng.fill_bytes(&mut nonce);
    let claims = Claims {
        v: version.to_owned(),
        c: capabilities.clone(),
        i: client_info.cloned(),
        p: caller(principal),
        t: secs(SystemTime::now()),
        n: URL_SAFE_NO_PAD.encode(nonce),
    };
    let plain = serde_json::to_vec(&claims).map_err(Error::internal_from)?;
    if plain.len() > MAX_SESSION_BYTES {
        return Err(Error::invalid_params(format!(
            "Invalid params: the capabilities and clientInfo take {} bytes; at most {MAX_SESSION_BYTES} fit in a session",
            plain.len()
        )));
    }
    keys.seal_bytes(Purpose::LEGACY_SESSION, &plain)
}

/// A session id that opened: what it carries, before the caller and the clock are checked
/// (what the [`SessionCache`](super::session_cache::SessionCache) keeps).
#[derive(Debug, Clone)]
pub(crate) struct Unsealed {
    session: Session,
    principal: Option<String>,
    /// The plaintext's length (what keeping it costs, about).
    plain_len: usize,
}

impl Unsealed {
    /// When the session expires.
    pub(crate) fn expires(&self) -> SystemTime {
        self.session.expires
    }

    /// Roughly the bytes it holds.
    pub(crate) fn size(&self) -> usize {
        self.plain_len + std::mem::size_of::<Self>()
    }

    /// The session, for a request by `principal` at `now`: refused when the session belongs
    /// to another caller or has expired.
    pub(crate) fn admit(
        &self,
        principal: Option<&Principal>,
        now: SystemTime,
    ) -> Result<Session, Refused> {
        if self.principal != caller(principal) {
            return Err(Refused::Unknown("it belongs to another caller"));
        }
        if self.session.expires <= now {
            return Err(Refused::Unknown(EXPIRED));
        }
        Ok(self.session.clone())
    }
}

/// Opens the session id `token` (valid for `ttl` from issue): refused when it does not open
/// (tampered, another ring or purpose), is malformed, or was issued by an earlier version.
pub(crate) fn unseal(keys: &StateKeys, token: &str, ttl: Duration) -> Result<Unsealed, Refused> {
    let plain = keys
        .open_bytes(Purpose::LEGACY_SESSION, token)
        .map_err(|_| Refused::Unknown("not a session id this server issued"))?;
    let claims: Claims =
        serde_json::from_slice(&plain).map_err(|_| Refused::Unknown("malformed"))?;
    if claims.n.len() != KEY_CHARS {
        return Err(Refused::Unknown(
            "issued by an earlier version of the server",
        ));
    }
    Ok(Unsealed {
        session: Session {
            key: claims.n.into(),
            identity: Arc::new(ClientIdentity {
                protocol_version: claims.v,
                capabilities: claims.c,
                client_info: claims.i,
            }),
            expires: UNIX_EPOCH + Duration::from_secs(claims.t) + ttl,
            issued: UNIX_EPOCH + Duration::from_secs(claims.t),
        },
        principal: claims.p,
        plain_len: plain.len(),
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::legacy) const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    pub(in crate::legacy) const K2: &str = "k2:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA=";
    pub(in crate::legacy) const DAY: Duration = Duration::from_secs(86_400);

    pub(in crate::legacy) fn ring(s: &str) -> StateKeys {
        s.parse().unwrap()
    }

    /// Opens `token` as a request by `principal` at `now` would (without the cache).
    fn open_at(
        keys: &StateKeys,
        token: Option<&str>,
        principal: Option<&Principal>,
        ttl: Duration,
        now: SystemTime,
    ) -> Result<Session, Refused> {
        unseal(keys, token.ok_or(Refused::Missing)?, ttl)?.admit(principal, now)
    }

    fn open(
        keys: &StateKeys,
        token: Option<&str>,
        principal: Option<&Principal>,
        ttl: Duration,
    ) -> Result<Session, Refused> {
        open_at(keys, token, principal, ttl, SystemTime::now())
    }

    #[test]
    fn a_session_opens_on_any_replica_with_the_ring() {
        let caps: ClientCapabilities =
            serde_json::from_str(r#"{"sampling":{},"elicitation":{}}"#).unwrap();
        let info = Implementation::new("c", "1");
        let token = issue(&ring(K1), "2025-11-25", &caps, Some(&info), None).unwrap();
        assert!(token.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{token}");
        let other_replica = ring(&format!("{K2},{K1}"));
        let s = open(&other_replica, Some(&token), None, DAY).unwrap();
        assert_eq!(s.identity.protocol_version, "2025-11-25");
        assert_eq!(s.identity.capabilities, caps);
        assert_eq!(s.identity.client_info, Some(info));
        assert_eq!(s.key, open(&ring(K1), Some(&token), None, DAY).unwrap().key);
        let again = issue(&ring(K1), "2025-11-25", &caps, None, None).unwrap();
        assert_ne!(
            open(&ring(K1), Some(&again), None, DAY).unwrap().key,
            s.key,
            "every initialize is a new session"
        );
    }

    #[test]
    fn refusals() {
        let keys = ring(K1);
        let alice = Principal::new("alice").with_issuer("https://as");
        let bob = Principal::new("bob").with_issuer("https://as");
        let caps = ClientCapabilities::default();
        let token = issue(&keys, "2025-11-25", &caps, None, Some(&alice)).unwrap();
        assert!(open(&keys, Some(&token), Some(&alice), DAY).is_ok());
        assert_eq!(
            open(&keys, None, Some(&alice), DAY).unwrap_err(),
            Refused::Missing
        );
        for (t, who, keys) in [
            (format!("{token}x"), Some(&alice), keys.clone()),
            (token.clone(), Some(&bob), keys.clone()),
            (token.clone(), None, keys.clone()),
            (token.clone(), Some(&alice), ring(K2)),
            ("nonsense".to_owned(), Some(&alice), keys.clone()),
        ] {
            let e = open(&keys, Some(&t), who, DAY).unwrap_err();
            assert!(matches!(e, Refused::Unknown(_)), "{t}");
        }
        let later = SystemTime::now() + DAY + Duration::from_secs(1);
        assert_eq!(
            open_at(&keys, Some(&token), Some(&alice), DAY, later).unwrap_err(),
            Refused::Unknown("expired")
        );
    }

    #[test]
    fn the_store_key_is_the_sealed_random_part_and_older_ids_initialize_again() {
        let keys = ring(K1);
        let caps = ClientCapabilities::default();
        let token = issue(&keys, "2025-11-25", &caps, None, None).unwrap();
        let s = open(&keys, Some(&token), None, DAY).unwrap();
        let claims: Claims =
            serde_json::from_slice(&keys.open_bytes(Purpose::LEGACY_SESSION, &token).unwrap())
                .unwrap();
        assert_eq!(*s.key, claims.n);
        assert_eq!(URL_SAFE_NO_PAD.decode(&*s.key).unwrap().len(), KEY_BYTES);
        assert!(!token.contains(&*s.key), "the key is not visible in the id");
        // An id sealed before the store was keyed by `n` (12 random bytes): its settings and
        // its revocation were recorded under a digest of the id, so it opens no more.
        let old = Claims {
            n: URL_SAFE_NO_PAD.encode([7u8; 12]),
            ..claims
        };
        let old = keys
            .seal_bytes(Purpose::LEGACY_SESSION, &serde_json::to_vec(&old).unwrap())
            .unwrap();
        assert_eq!(
            open(&keys, Some(&old), None, DAY).unwrap_err(),
            Refused::Unknown("issued by an earlier version of the server")
        );
    }

    #[test]
    fn a_session_id_never_opens_as_request_state_nor_the_reverse() {
        let keys = ring(K1);
        let token = issue(
            &keys,
            "2025-11-25",
            &ClientCapabilities::default(),
            None,
            None,
        )
        .unwrap();
        assert!(keys.open_bytes(Purpose::REQUEST_STATE, &token).is_err());
        let state = keys.seal_bytes(Purpose::REQUEST_STATE, b"{}").unwrap();
        assert!(open(&keys, Some(&state), None, DAY).is_err());
    }

    #[test]
    fn oversized_capabilities_are_refused_at_initialize() {
        let caps: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "experimental": {"x": "y".repeat(MAX_SESSION_BYTES)}
        }))
        .unwrap();
        let e = issue(&ring(K1), "2025-11-25", &caps, None, None).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidParams);
    }
}

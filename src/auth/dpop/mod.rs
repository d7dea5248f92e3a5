//! DPoP (RFC 9449): access tokens bound to a key the client holds, so a stolen token is
//! useless without that key. Turned on with
//! [`ResourceServerBuilder::dpop`](crate::auth::ResourceServerBuilder::dpop) and a [`Dpop`]
//! policy: accept DPoP beside plain bearer tokens, or require it.
//!
//! A DPoP request carries `Authorization: DPoP <token>` and one `DPoP: <proof>` header. The
//! resource server checks (RFC 9449 §4.3, §7):
//!
//! - the proof: a compact JWS with `typ: dpop+jwt`, an allowed asymmetric `alg`, and the
//!   public `jwk` it is signed with (a private key member is refused);
//! - its claims: `htm` is the request's method; `htu` is the request's public URL (the
//!   resource identifier's origin and the request path, so it holds behind a proxy),
//!   compared normalised and without query or fragment; `iat` within the proof age (default
//!   60 s) and the clock skew allowed (5 s); `ath` is base64url(SHA-256(access token));
//!   `nonce` is a valid server nonce when nonces are on;
//! - the token (a JWT or introspected, as for bearer tokens) names the proof's key: its
//!   `cnf.jkt` is the key's RFC 7638 thumbprint;
//! - the proof's `jti` has not been used before, on any replica: it is claimed in the
//!   shared [`ReplayStore`](crate::extend::ReplayStore) until the proof is too old anyway.
//!
//! A token bound to a key (`cnf.jkt`) presented as a bearer token is refused, and with
//! [`Dpop::require`] so is every bearer token. Refusals carry
//! `WWW-Authenticate: DPoP algs="…"` with `error="invalid_dpop_proof"` (the proof),
//! `invalid_token` (the token or its binding) or `use_dpop_nonce` (with a fresh `DPoP-Nonce`
//! header). Server nonces ([`Dpop::nonces`]) are sealed with the deployment's key ring, so
//! every replica accepts every replica's nonce without sharing any state. The RFC 9728
//! metadata gains `dpop_signing_alg_values_supported` and
//! `dpop_bound_access_tokens_required`.

mod htu;
mod nonce;
mod proof;
mod thumbprint;

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, Method, Uri};
use serde_json::Value;

use super::Algorithm;
use super::cache::unix_now;
use super::challenge::Rejection;
use crate::backends::replay::{MemoryReplayStore, ReplayStore};
use crate::handler::Principal;
use crate::settings::StateKeys;

/// The DPoP policy of a resource server
/// ([`ResourceServerBuilder::dpop`](crate::auth::ResourceServerBuilder::dpop)).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use stateless_mcp::auth::{Algorithm, Dpop, ResourceServer};
/// use stateless_mcp::backends::MemoryReplayStore;
/// use stateless_mcp::settings::StateKeys;
///
/// let keys = StateKeys::generate(); // every replica needs the same ring
/// let auth = ResourceServer::builder("https://mcp.example.com/mcp")
///     .issuer("https://auth.example.com")
///     .dpop(
///         Dpop::require()
///             .algorithms([Algorithm::ES256, Algorithm::EdDSA])
///             .proof_max_age(Duration::from_secs(30))
///             .replay_store(Arc::new(MemoryReplayStore::default()))
///             .nonces(keys, Duration::from_secs(300)),
///     )
///     .build()
///     .unwrap();
/// assert_eq!(auth.metadata()["dpop_bound_access_tokens_required"], true);
/// ```
#[derive(Clone)]
#[must_use]
pub struct Dpop {
    required: bool,
    algorithms: Vec<Algorithm>,
    max_age: Duration,
    skew: Duration,
    replay: Arc<dyn ReplayStore>,
    nonces: Option<(StateKeys, Duration)>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("required", &self.required)
            .field("algorithms", &self.algorithms)
            .field("max_age", &self.max_age)
            .field("nonces", &self.nonces.as_ref().map(|(_, l)| l))
            .finish_non_exhaustive()
    }
}

impl Dpop {
    fn new(required: bool) -> Self {
        Dpop {
            required,
            algorithms: vec![
                Algorithm::ES256,
                Algorithm::ES384,
                Algorithm::EdDSA,
                Algorithm::PS256,
                Algorithm::RS256,
            ],
            max_age: Duration::from_secs(60),
            skew: Duration::from_secs(5),
            replay: Arc::new(MemoryReplayStore::default()),
            nonces: None,
        }
    }

    /// Accepts DPoP-bound tokens with their proofs, and plain bearer tokens (tokens bound to
    /// a key are still refused as bearer tokens).
    pub fn accept() -> Self {
        Dpop::new(false)
    }

    /// Accepts DPoP only: every bearer token is refused.
    pub fn require() -> Self {
        Dpop::new(true)
    }

    /// The proof algorithms accepted (default ES256, ES384, EdDSA, PS256, RS256); named in
    /// challenges and in the metadata.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// How old a proof may be by its `iat` (default 60 s); also how long its `jti` is
    /// remembered.
    pub fn proof_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// How far ahead of this server's clock a proof's `iat` may be (default 5 s).
    pub fn clock_skew(mut self, skew: Duration) -> Self {
        self.skew = skew;
        self
    }

    /// Where used `jti`s are claimed (default: this process's memory). Give every replica
    /// the same shared store (e.g. [`RedisReplayStore`](crate::backends::RedisReplayStore)),
    /// or a proof replayed to another replica is accepted there.
    pub fn replay_store(mut self, store: Arc<dyn ReplayStore>) -> Self {
        self.replay = store;
        self
    }

    /// Requires server nonces (RFC 9449 §9): a proof without a valid one is refused with
    /// `use_dpop_nonce` and a `DPoP-Nonce` header, and admitted responses carry the current
    /// nonce. Nonces are sealed with `keys` (every replica needs the same ring; the ring that
    /// seals `requestState` will do) and accepted for one to two `lifetime`s.
    pub fn nonces(mut self, keys: StateKeys, lifetime: Duration) -> Self {
        self.nonces = Some((keys, lifetime));
        self
    }
}

/// The built DPoP check of a resource server.
pub(crate) struct DpopCheck {
    pub(crate) required: bool,
    algorithms: Vec<Algorithm>,
    /// `algs="…"` of challenges.
    pub(crate) algs: String,
    max_age_secs: i64,
    skew_secs: i64,
    replay: Arc<dyn ReplayStore>,
    nonces: Option<nonce::Nonces>,
    /// The resource identifier's normalised origin.
    origin: String,
}

impl std::fmt::Debug for DpopCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopCheck")
            .field("required", &self.required)
            .field("algs", &self.algs)
            .finish_non_exhaustive()
    }
}

/// A DPoP request's proof, checked up to what needs the token's claims and the store.
pub(crate) struct Pending(proof::Proof);

impl DpopCheck {
    /// `None` when `dpop` lists no algorithm.
    pub(crate) fn new(dpop: Dpop, origin: String) -> Option<Self> {
        if dpop.algorithms.is_empty() {
            return None;
        }
        let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 4);
        Some(DpopCheck {
            required: dpop.required,
            algs: dpop
                .algorithms
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            algorithms: dpop.algorithms,
            max_age_secs: secs(dpop.max_age),
            skew_secs: secs(dpop.skew),
            replay: dpop.replay,
            nonces: dpop.nonces.map(|(k, l)| nonce::Nonces::new(k, l)),
            origin,
        })
    }

    /// The algorithm names, for the metadata.
    pub(crate) fn algorithm_names(&self) -> Vec<&'static str> {
        self.algorithms.iter().map(|a| a.as_str()).collect()
    }

    /// The nonce to send in `DPoP-Nonce`, when nonces are on.
    pub(crate) fn current_nonce(&self) -> Option<String> {
        self.nonces.as_ref().map(nonce::Nonces::current)
    }

    /// Checks the request's one `DPoP` header against the request and `token`.
    pub(crate) fn check_proof(
        &self,
        headers: &HeaderMap,
        method: &Method,
        uri: &Uri,
        token: &str,
    ) -> Result<Pending, Rejection> {
        let mut values = headers.get_all("dpop").iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(Rejection::invalid_dpop_proof(
                "A DPoP request needs exactly one DPoP header",
            ));
        };
        let value = value
            .to_str()
            .map_err(|_| Rejection::invalid_dpop_proof("The DPoP header is not visible ASCII"))?;
        let Some(expected) = htu::expected(&self.origin, uri.path()) else {
            return Err(Rejection::invalid_dpop_proof(
                "The request URL cannot be checked",
            ));
        };
        let nonce_check = |n: &str| self.nonces.as_ref().is_some_and(|x| x.is_valid(n));
        let rules = proof::Rules {
            algorithms: &self.algorithms,
            max_age_secs: self.max_age_secs,
            skew_secs: self.skew_secs,
            nonce: self
                .nonces
                .as_ref()
                .map(|_| &nonce_check as &dyn Fn(&str) -> bool),
        };
        let request = proof::Request {
            method: method.as_str(),
            htu: &expected,
            access_token: token,
            now: unix_now(),
        };
        match proof::verify(value.trim(), &request, &rules) {
            Ok(p) => Ok(Pending(p)),
            Err(proof::Refused::Invalid(why)) => Err(Rejection::invalid_dpop_proof(why)),
            Err(proof::Refused::Nonce(why)) => Err(Rejection::use_dpop_nonce(why)),
        }
    }

    /// Checks that the token `principal` came from is bound to the proof's key, then claims
    /// the proof's `jti` (single use across every replica sharing the store).
    pub(crate) async fn bind(
        &self,
        pending: Pending,
        principal: &Principal,
    ) -> Result<(), Rejection> {
        let Pending(proof) = pending;
        match bound_key(principal) {
            Some(jkt) if jkt == proof.jkt => {}
            Some(_) => {
                return Err(Rejection::invalid_token(
                    "The token is bound to another key than the DPoP proof's",
                ));
            }
            None => {
                return Err(Rejection::invalid_token(
                    "The token is not bound to a DPoP key (no cnf.jkt)",
                ));
            }
        }
        let id = replay_id(&proof.jkt, &proof.jti);
        let until = proof.iat + self.max_age_secs + 2 * self.skew_secs + 1;
        let expires = std::time::UNIX_EPOCH
            + Duration::from_secs(u64::try_from(until.max(1)).unwrap_or(u64::MAX / 4));
        match self.replay.claim(&id, expires).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(Rejection::invalid_dpop_proof(
                "The DPoP proof was used before (jti)",
            )),
            Err(e) => {
                tracing::warn!(error = %e, "the DPoP replay store is unavailable");
                Err(Rejection::unavailable(
                    "DPoP proofs cannot be checked for replay right now",
                ))
            }
        }
    }
}

/// The key a token is bound to: its `cnf.jkt` claim (JWT, RFC 9449 §6.1) or introspection
/// member (§6.2).
pub(crate) fn bound_key(principal: &Principal) -> Option<&str> {
    principal
        .claims
        .get("cnf")?
        .get("jkt")
        .and_then(Value::as_str)
}

/// The replay-store id of a proof: a digest of its key and `jti` (bounded, and no two keys
/// collide on a `jti`).
fn replay_id(jkt: &str, jti: &str) -> String {
    use base64::Engine as _;
    use sha2::{Digest as _, Sha256};
    let digest = Sha256::new()
        .chain_update(jkt.as_bytes())
        .chain_update(b".")
        .chain_update(jti.as_bytes())
        .finalize();
    format!(
        "dpop.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..18])
    )
}

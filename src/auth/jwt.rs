//! JWT access tokens: signature by a key of the issuer's JWKS under an allowed asymmetric
//! algorithm, then `iss`, `aud` (RFC 8707: must include this resource), `exp` and `nbf`.

use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, AlgorithmFamily, Validation};
use serde_json::{Map, Value};

use super::cache::TokenCache;
use super::challenge::Rejection;
use super::claims;
use super::jwks::KeyStore;
use crate::handler::Principal;

/// Verifies JWTs.
pub(crate) struct JwtVerifier {
    keys: Arc<KeyStore>,
    /// One validation per allowed algorithm (`jsonwebtoken` wants a single key family in
    /// each).
    validations: Vec<(Algorithm, Validation)>,
    /// Tokens verified before, until they expire (bounded).
    cache: TokenCache,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field(
                "algorithms",
                &self.validations.iter().map(|(a, _)| a).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// The key family an algorithm verifies with.
pub(crate) fn family(alg: Algorithm) -> AlgorithmFamily {
    use Algorithm::*;
    match alg {
        HS256 | HS384 | HS512 => AlgorithmFamily::Hmac,
        RS256 | RS384 | RS512 | PS256 | PS384 | PS512 => AlgorithmFamily::Rsa,
        ES256 | ES384 => AlgorithmFamily::Ec,
        EdDSA => AlgorithmFamily::Ed,
    }
}

/// Whether `token` has the shape of a JWS in compact form (three segments and a header
/// that parses).
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.bytes().filter(|&b| b == b'.').count() == 2
}

impl JwtVerifier {
    /// `algorithms` must be non-empty and asymmetric (checked by the builder).
    pub(crate) fn new(
        keys: Arc<KeyStore>,
        issuer: &str,
        resource: &str,
        algorithms: Vec<Algorithm>,
        leeway_secs: u64,
        cache: TokenCache,
    ) -> Self {
        let validations = algorithms
            .into_iter()
            .map(|alg| {
                let mut v = Validation::new(alg);
                v.set_issuer(&[issuer]);
                v.set_audience(&[resource]);
                v.set_required_spec_claims(&["exp", "iss", "aud"]);
                v.leeway = leeway_secs;
                v.validate_exp = true;
                v.validate_nbf = true;
                (alg, v)
            })
            .collect();
        JwtVerifier {
            keys,
            validations,
            cache,
        }
    }

    pub(crate) async fn verify(&self, token: &str) -> Result<Principal, Rejection> {
        let digest = TokenCache::digest(token);
        if let Some(p) = self.cache.get(&digest) {
            return Ok(p);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|e| {
            tracing::debug!(error = %e, "unreadable JWT header");
            Rejection::invalid_token("The token is malformed or uses an unsupported algorithm")
        })?;
        let Some((_, validation)) = self.validations.iter().find(|(a, _)| *a == header.alg) else {
            return Err(Rejection::invalid_token(format!(
                "The token's algorithm {:?} is not accepted",
                header.alg
            )));
        };
        let key =
            self.keys.key(header.kid.as_deref()).await.ok_or_else(|| {
                Rejection::invalid_token("The token is signed with an unknown key")
            })?;
        // A symmetric algorithm is never checked against a public key, nor RSA against EC.
        if family(header.alg) == AlgorithmFamily::Hmac
            || key.family != family(header.alg)
            || key.alg.is_some_and(|a| a != header.alg)
        {
            return Err(Rejection::invalid_token(
                "The token's algorithm does not match its signing key",
            ));
        }
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, validation)
            .map_err(|e| Rejection::invalid_token(describe(e.kind())))?;
        let exp = data.claims.get("exp").and_then(Value::as_i64);
        let principal = claims::principal(data.claims);
        self.cache.put(digest, &principal, exp);
        Ok(principal)
    }
}

fn describe(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "The token has expired",
        ErrorKind::ImmatureSignature => "The token is not valid yet",
        ErrorKind::InvalidIssuer => "The token was issued by another issuer",
        ErrorKind::InvalidAudience => "The token's audience does not include this resource",
        ErrorKind::InvalidSignature => "The token's signature is invalid",
        ErrorKind::MissingRequiredClaim(_) => "The token lacks a required claim (exp, iss, aud)",
        ErrorKind::InvalidAlgorithm => "The token's algorithm does not match its signing key",
        _ => "The token is invalid",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwt_shape() {
        assert!(looks_like_jwt("a.b.c"));
        assert!(!looks_like_jwt("opaque-token"));
        assert!(!looks_like_jwt("a.b.c.d.e"));
    }
}

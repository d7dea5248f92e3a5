//! One DPoP proof (RFC 9449 §4.3): a JWS whose header carries `typ: dpop+jwt`, an allowed
//! asymmetric `alg` and the public `jwk` it is signed with, and whose claims tie it to one
//! request (`htm`, `htu`), one moment (`iat`), one use (`jti`), one access token (`ath`)
//! and, when the server asks for them, one server nonce (`nonce`).
//!
//! Checked here, without I/O: shape and size, header, key, signature, then the claims
//! against the request. What needs the token's claims (`cnf.jkt`) or the shared store
//! (`jti`) is checked by the caller with what [`verify`] returns.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk};
use jsonwebtoken::{AlgorithmFamily, DecodingKey};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::htu;
use super::thumbprint::thumbprint;
use crate::auth::Algorithm;

/// The longest proof looked at (a proof with an RSA-4096 key is under 2 KiB).
pub(crate) const MAX_PROOF_BYTES: usize = 8 * 1024;
/// The longest `jti` accepted.
const MAX_JTI_BYTES: usize = 256;
/// JWK members that only a private (or symmetric) key has.
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// A proof that passed every check that needs no I/O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proof {
    /// The RFC 7638 thumbprint of the proof's key.
    pub(crate) jkt: String,
    /// Its unique id.
    pub(crate) jti: String,
    /// When it was made (Unix seconds).
    pub(crate) iat: i64,
}

/// Why a proof was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Malformed, badly signed, or not for this request: `invalid_dpop_proof`.
    Invalid(Cow<'static, str>),
    /// Without the server nonce, or with a stale one: `use_dpop_nonce`.
    Nonce(Cow<'static, str>),
}

/// What a proof must match.
pub(crate) struct Request<'a> {
    /// The HTTP method.
    pub(crate) method: &'a str,
    /// The normalised public URL of the request ([`htu::expected`]).
    pub(crate) htu: &'a str,
    /// The access token the proof comes with.
    pub(crate) access_token: &'a str,
    /// Now, in Unix seconds.
    pub(crate) now: i64,
}

/// The rules a proof is checked by.
pub(crate) struct Rules<'a> {
    pub(crate) algorithms: &'a [Algorithm],
    /// How old a proof may be.
    pub(crate) max_age_secs: i64,
    /// How far ahead of ours the client's clock may be.
    pub(crate) skew_secs: i64,
    /// The server nonce check, when nonces are required.
    pub(crate) nonce: Option<&'a dyn Fn(&str) -> bool>,
}

fn invalid(why: &'static str) -> Refused {
    Refused::Invalid(Cow::Borrowed(why))
}

/// base64url(SHA-256(token)): the `ath` a proof for `token` carries.
pub(crate) fn ath(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

fn decode_object(segment: &str, what: &'static str) -> Result<Map<String, Value>, Refused> {
    let bytes = URL_SAFE_NO_PAD.decode(segment).map_err(|_| {
        Refused::Invalid(Cow::Owned(format!("The proof's {what} is not base64url")))
    })?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(Refused::Invalid(Cow::Owned(format!(
            "The proof's {what} is not a JSON object"
        )))),
    }
}

/// The key family and curve an algorithm needs, checked against the JWK.
fn key_fits(alg: Algorithm, jwk: &Jwk) -> bool {
    let family = crate::auth::jwt::family(alg.to_jwt());
    match (&jwk.algorithm, family) {
        (AlgorithmParameters::RSA(_), AlgorithmFamily::Rsa) => true,
        (AlgorithmParameters::EllipticCurve(p), AlgorithmFamily::Ec) => matches!(
            (alg, &p.curve),
            (Algorithm::ES256, EllipticCurve::P256) | (Algorithm::ES384, EllipticCurve::P384)
        ),
        (AlgorithmParameters::OctetKeyPair(p), AlgorithmFamily::Ed) => {
            p.curve == EllipticCurve::Ed25519
        }
        _ => false,
    }
}

/// Checks `proof` for `request` under `rules`.
pub(crate) fn verify(
    proof: &str,
    request: &Request<'_>,
    rules: &Rules<'_>,
) -> Result<Proof, Refused> {
    if proof.len() > MAX_PROOF_BYTES {
        return Err(invalid("The DPoP proof is too large"));
    }
    let mut parts = proof.split('.');
    let (Some(h), Some(c), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("The DPoP proof is not a compact JWS"));
    };
    let header = decode_object(h, "header")?;
    let typ = header.get("typ").and_then(Value::as_str);
    if !typ.is_some_and(|t| t.eq_ignore_ascii_case("dpop+jwt")) {
        return Err(invalid("The DPoP proof's typ is not dpop+jwt"));
    }
    let alg_name = header.get("alg").and_then(Value::as_str).unwrap_or("");
    let Some(alg) = rules
        .algorithms
        .iter()
        .copied()
        .find(|a| a.as_str() == alg_name)
    else {
        return Err(Refused::Invalid(Cow::Owned(format!(
            "The DPoP proof's algorithm {alg_name:?} is not accepted"
        ))));
    };
    let Some(Value::Object(jwk_members)) = header.get("jwk") else {
        return Err(invalid("The DPoP proof's header has no jwk"));
    };
    if PRIVATE_MEMBERS.iter().any(|m| jwk_members.contains_key(*m)) {
        return Err(invalid("The DPoP proof's jwk is not a public key"));
    }
    let jkt = thumbprint(jwk_members)
        .ok_or_else(|| invalid("The DPoP proof's jwk is not a usable public key"))?;
    let jwk: Jwk = serde_json::from_value(Value::Object(jwk_members.clone()))
        .map_err(|_| invalid("The DPoP proof's jwk is not a usable public key"))?;
    if !key_fits(alg, &jwk) {
        return Err(invalid("The DPoP proof's jwk does not fit its algorithm"));
    }
    let key = DecodingKey::from_jwk(&jwk)
        .map_err(|_| invalid("The DPoP proof's jwk is not a usable public key"))?;
    let message = &proof[..h.len() + 1 + c.len()];
    if !jsonwebtoken::crypto::verify(s, message.as_bytes(), &key, alg.to_jwt()).unwrap_or(false) {
        return Err(invalid("The DPoP proof's signature is invalid"));
    }

    let claims = decode_object(c, "claims")?;
    let text = |k: &str| claims.get(k).and_then(Value::as_str);
    let jti = text("jti").filter(|j| !j.is_empty() && j.len() <= MAX_JTI_BYTES);
    let Some(jti) = jti else {
        return Err(invalid(
            "The DPoP proof has no jti (or one that is too long)",
        ));
    };
    if text("htm") != Some(request.method) {
        return Err(invalid("The DPoP proof's htm is not this request's method"));
    }
    if text("htu").and_then(htu::normalise).as_deref() != Some(request.htu) {
        return Err(invalid("The DPoP proof's htu is not this resource's URL"));
    }
    let Some(iat) = claims
        .get("iat")
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
    else {
        return Err(invalid("The DPoP proof has no iat"));
    };
    if iat > request.now + rules.skew_secs {
        return Err(invalid("The DPoP proof's iat is in the future"));
    }
    if iat < request.now - rules.max_age_secs - rules.skew_secs {
        return Err(invalid("The DPoP proof is too old (iat)"));
    }
    match text("ath") {
        Some(a) if a == ath(request.access_token) => {}
        Some(_) => {
            return Err(invalid(
                "The DPoP proof's ath is not the hash of this access token",
            ));
        }
        None => return Err(invalid("The DPoP proof has no ath")),
    }
    if let Some(valid) = rules.nonce {
        match text("nonce") {
            None => {
                return Err(Refused::Nonce(
                    "Resource server requires nonce in DPoP proof".into(),
                ));
            }
            Some(n) if !valid(n) => {
                return Err(Refused::Nonce(
                    "The DPoP proof's nonce is invalid or stale".into(),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(Proof {
        jkt,
        jti: jti.to_owned(),
        iat,
    })
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::signature::Signer as _;
    use p256::ecdsa::{Signature, SigningKey};
    use serde_json::json;

    use super::*;

    const HTU: &str = "https://mcp.example.com/mcp";
    const NOW: i64 = 1_800_000_000;

    fn b64(b: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(b)
    }

    struct Key(SigningKey);

    impl Key {
        fn new() -> Key {
            Key(SigningKey::random(&mut rand::thread_rng()))
        }

        fn jwk(&self) -> Value {
            let p = self.0.verifying_key().to_encoded_point(false);
            json!({"kty":"EC","crv":"P-256","x":b64(p.x().unwrap()),"y":b64(p.y().unwrap())})
        }

        fn sign(&self, header: &Value, claims: &Value) -> String {
            let input = format!(
                "{}.{}",
                b64(header.to_string().as_bytes()),
                b64(claims.to_string().as_bytes())
            );
            let s: Signature = self.0.sign(input.as_bytes());
            format!("{input}.{}", b64(&s.to_bytes()))
        }
    }

    fn header(k: &Key) -> Value {
        json!({"typ":"dpop+jwt","alg":"ES256","jwk":k.jwk()})
    }

    fn claims() -> Value {
        json!({"jti":"j1","htm":"POST","htu":HTU,"iat":NOW,"ath":ath("tok")})
    }

    fn check(proof: &str, nonce: Option<&dyn Fn(&str) -> bool>) -> Result<Proof, Refused> {
        let rules = Rules {
            algorithms: &[Algorithm::ES256],
            max_age_secs: 60,
            skew_secs: 5,
            nonce,
        };
        let request = Request {
            method: "POST",
            htu: HTU,
            access_token: "tok",
            now: NOW,
        };
        verify(proof, &request, &rules)
    }

    fn refused(proof: &str) -> String {
        match check(proof, None) {
            Err(Refused::Invalid(why)) => why.into_owned(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_proof_names_its_key() {
        let k = Key::new();
        let p = check(&k.sign(&header(&k), &claims()), None).unwrap();
        let jwk = k.jwk();
        assert_eq!(Some(p.jkt), thumbprint(jwk.as_object().unwrap()));
        assert_eq!(p.jti, "j1");
    }

    #[test]
    fn every_broken_part_is_refused() {
        let k = Key::new();
        let other = Key::new();
        let edit = |mut v: Value, key: &str, x: Value| {
            match x {
                Value::Null => {
                    v.as_object_mut().unwrap().remove(key);
                }
                x => v[key] = x,
            }
            v
        };
        let mut private = k.jwk();
        private["d"] = json!("AAAA");
        let cases = [
            (
                k.sign(&edit(header(&k), "typ", json!("jwt")), &claims()),
                "typ",
            ),
            (
                k.sign(&edit(header(&k), "alg", json!("ES384")), &claims()),
                "algorithm",
            ),
            (
                k.sign(&edit(header(&k), "alg", json!("none")), &claims()),
                "algorithm",
            ),
            (
                k.sign(&edit(header(&k), "jwk", Value::Null), &claims()),
                "no jwk",
            ),
            (
                k.sign(&edit(header(&k), "jwk", private), &claims()),
                "not a public key",
            ),
            (other.sign(&header(&k), &claims()), "signature"),
            (
                k.sign(&header(&k), &edit(claims(), "htm", json!("GET"))),
                "htm",
            ),
            (
                k.sign(&header(&k), &edit(claims(), "htu", json!("https://x/mcp"))),
                "htu",
            ),
            (
                k.sign(&header(&k), &edit(claims(), "iat", json!(NOW - 66))),
                "too old",
            ),
            (
                k.sign(&header(&k), &edit(claims(), "iat", json!(NOW + 6))),
                "future",
            ),
            (
                k.sign(&header(&k), &edit(claims(), "jti", Value::Null)),
                "jti",
            ),
            (
                k.sign(&header(&k), &edit(claims(), "jti", json!("x".repeat(300)))),
                "jti",
            ),
            (
                k.sign(&header(&k), &edit(claims(), "ath", Value::Null)),
                "no ath",
            ),
            (
                k.sign(&header(&k), &edit(claims(), "ath", json!(ath("other")))),
                "ath",
            ),
            ("a.b".to_owned(), "compact"),
            ("a.b.c.d".to_owned(), "compact"),
            ("x".repeat(MAX_PROOF_BYTES + 1), "too large"),
        ];
        for (proof, why) in cases {
            let got = refused(&proof);
            assert!(got.contains(why), "{why}: {got}");
        }
        // Within the window and the skew: accepted.
        assert!(
            check(
                &k.sign(&header(&k), &edit(claims(), "iat", json!(NOW - 64))),
                None
            )
            .is_ok()
        );
        assert!(
            check(
                &k.sign(&header(&k), &edit(claims(), "iat", json!(NOW + 5))),
                None
            )
            .is_ok()
        );
    }

    #[test]
    fn nonces_when_required() {
        let k = Key::new();
        let good = |n: &str| n == "n1";
        let without = k.sign(&header(&k), &claims());
        assert!(matches!(
            check(&without, Some(&good)),
            Err(Refused::Nonce(_))
        ));
        let mut c = claims();
        c["nonce"] = json!("n0");
        assert!(matches!(
            check(&k.sign(&header(&k), &c), Some(&good)),
            Err(Refused::Nonce(_))
        ));
        c["nonce"] = json!("n1");
        assert!(check(&k.sign(&header(&k), &c), Some(&good)).is_ok());
    }
}

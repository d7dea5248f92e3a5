//! RFC 7638 JWK thumbprints: SHA-256 over the key's required members, in lexicographic
//! order, without whitespace, base64url without padding. Computed from the JWK as it came
//! (its JSON members), so it is byte-for-byte what the authorization server put in the
//! token's `cnf.jkt`.
//!
//! (`jsonwebtoken`'s own `Jwk::thumbprint` mis-encodes OKP keys and panics on some inputs,
//! so it is not used.)

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// The thumbprint of a public JWK, or `None` when its key type is not one a proof may use
/// (`EC`, `RSA`, `OKP`) or a required member is missing or not a string.
pub(crate) fn thumbprint(jwk: &Map<String, Value>) -> Option<String> {
    let required: &[&str] = match jwk.get("kty")?.as_str()? {
        "EC" => &["crv", "kty", "x", "y"],
        "RSA" => &["e", "kty", "n"],
        "OKP" => &["crv", "kty", "x"],
        _ => return None,
    };
    let mut canonical = String::with_capacity(160);
    canonical.push('{');
    for (i, name) in required.iter().enumerate() {
        let value = jwk.get(*name)?.as_str()?;
        if i > 0 {
            canonical.push(',');
        }
        canonical.push('"');
        canonical.push_str(name);
        canonical.push_str("\":");
        // A JSON string as serde_json writes it: the escaping RFC 7638 §3.3 asks for.
        canonical.push_str(&serde_json::to_string(value).ok()?);
    }
    canonical.push('}');
    Some(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_rfc_7638_example() {
        // RFC 7638 §3.1.
        let jwk = map(json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB",
            "alg": "RS256",
            "kid": "2011-04-29"
        }));
        assert_eq!(
            thumbprint(&map(json!(jwk))).unwrap(),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn only_public_key_types_with_their_members() {
        let ec = map(json!({"kty":"EC","crv":"P-256","x":"a","y":"b","kid":"ignored"}));
        let reordered = map(json!({"y":"b","x":"a","crv":"P-256","kty":"EC"}));
        assert_eq!(thumbprint(&ec), thumbprint(&reordered));
        assert!(thumbprint(&map(json!({"kty":"EC","crv":"P-256","x":"a"}))).is_none());
        assert!(thumbprint(&map(json!({"kty":"oct","k":"c2VjcmV0"}))).is_none());
        assert!(thumbprint(&map(json!({"kty":"OKP","crv":"Ed25519","x":"a"}))).is_some());
        assert!(thumbprint(&map(json!({"kty":"RSA","n":1,"e":"AQAB"}))).is_none());
    }
}

//! DPoP (RFC 9449) for the tests: a real authorization-server process
//! (`dpop_issuer.py`, run by the test venv's Python) that mints DPoP-bound JWTs and opaque
//! tokens and answers introspection with `cnf`, and a client key that signs proofs.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::process::{python, root};

/// The authorization-server process; killed on drop.
pub struct Issuer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a minted token is carried.
#[derive(Clone, Copy, Debug)]
pub enum Format {
    /// A JWT with `cnf.jkt` (when bound).
    Jwt,
    /// An opaque token whose introspection answer carries `cnf`.
    Opaque,
}

impl Issuer {
    /// Starts the issuer on an ephemeral loopback port.
    pub fn start() -> Issuer {
        let mut child = Command::new(python())
            .arg(root().join("tests/it/support/dpop_issuer.py"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the DPoP issuer starts (the test venv's Python, with PyJWT)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let first: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the issuer prints its URL first, got {line:?}"));
        Issuer {
            child,
            url: first["issuer"].as_str().unwrap().to_owned(),
        }
    }

    /// A token for `resource` with `scope`, bound to `key` (proved at the token endpoint
    /// with a DPoP proof) or a plain bearer token without one.
    pub async fn token(
        &self,
        key: Option<&DpopKey>,
        resource: &str,
        scope: &str,
        format: Format,
    ) -> String {
        let url = format!("{}/token", self.url);
        let format = match format {
            Format::Jwt => "jwt",
            Format::Opaque => "opaque",
        };
        let form = oauth2::url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "client_credentials")
            .append_pair("resource", resource)
            .append_pair("scope", scope)
            .append_pair("format", format)
            .finish();
        let mut req = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form);
        if let Some(k) = key {
            req = req.header("dpop", k.proof("POST", &url, None, None));
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        let body: Value = r.json().await.unwrap();
        assert_eq!(status, 200, "the issuer minted a token: {body}");
        assert_eq!(
            body["token_type"],
            if key.is_some() { "DPoP" } else { "Bearer" }
        );
        body["access_token"].as_str().unwrap().to_owned()
    }
}

/// base64url without padding.
pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A client's P-256 key, which signs DPoP proofs (ES256).
pub struct DpopKey {
    key: SigningKey,
    /// The public JWK.
    pub jwk: Value,
}

impl Default for DpopKey {
    fn default() -> Self {
        Self::new()
    }
}

impl DpopKey {
    pub fn new() -> DpopKey {
        let key = SigningKey::random(&mut rand::thread_rng());
        let point = key.verifying_key().to_encoded_point(false);
        let jwk = json!({
            "kty": "EC", "crv": "P-256",
            "x": b64(point.x().unwrap()), "y": b64(point.y().unwrap()),
        });
        DpopKey { key, jwk }
    }

    /// The standard proof header: `typ`, `alg`, the public `jwk`.
    pub fn header(&self) -> Value {
        json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk})
    }

    /// Standard claims for `method` on `url`, with a fresh `jti`, `iat` now, `ath` of
    /// `token` and `nonce` when given.
    pub fn claims(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Value {
        let mut c = json!({
            "jti": b64(&rand::random::<[u8; 16]>()),
            "htm": method,
            "htu": url,
            "iat": super::authz::now(),
        });
        if let Some(t) = token {
            c["ath"] = json!(b64(&Sha256::digest(t.as_bytes())));
        }
        if let Some(n) = nonce {
            c["nonce"] = json!(n);
        }
        c
    }

    /// A valid proof.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> String {
        self.sign(&self.header(), &self.claims(method, url, token, nonce))
    }

    /// Signs any header and claims with this key (ES256), for proofs broken on purpose.
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", b64(&signature.to_bytes()))
    }
}

//! The issuer's signing keys (JWKS): fetched on first use, cached by `kid`, refreshed when a
//! token names an unknown `kid` (at most once per `min_refresh_interval`), and refreshed in
//! the background before the set's `Cache-Control: max-age` runs out. A failed fetch keeps
//! the keys already cached; a token signed by a key not in the cache is refused.

use std::collections::HashMap;
use std::str::FromStr as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;
use serde_json::Value;

use super::discovery::Discovery;
use super::http_client::HttpClient;

/// One verification key.
pub(crate) struct Key {
    pub(crate) decoding: DecodingKey,
    /// The algorithm the JWK pins, if any.
    pub(crate) alg: Option<Algorithm>,
    /// The key type, as the family of algorithms it can verify.
    pub(crate) family: jsonwebtoken::AlgorithmFamily,
}

/// Where the key set lives.
#[derive(Debug)]
pub(crate) enum KeySource {
    /// A configured `jwks_uri`.
    Url(String),
    /// The `jwks_uri` of the issuer's metadata.
    Discovered(Arc<Discovery>),
}

#[derive(Default)]
struct Keys {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid`.
    unnamed: Vec<Arc<Key>>,
}

/// The cached key set.
pub(crate) struct KeyStore {
    http: HttpClient,
    source: KeySource,
    keys: RwLock<Arc<Keys>>,
    last_attempt: tokio::sync::Mutex<Option<Instant>>,
    min_refresh_interval: Duration,
    max_refresh_interval: Duration,
    background: AtomicBool,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyStore")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct RawSet {
    keys: Vec<Value>,
}

/// Parses a JWKS, keeping the signature keys of asymmetric types and skipping the rest.
fn parse_set(body: &[u8]) -> Result<Keys, String> {
    let raw: RawSet = serde_json::from_slice(body).map_err(|e| format!("invalid JWKS: {e}"))?;
    let mut keys = Keys::default();
    for value in raw.keys {
        let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
            continue;
        };
        if matches!(
            jwk.common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) {
            continue;
        }
        let family = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => jsonwebtoken::AlgorithmFamily::Rsa,
            AlgorithmParameters::EllipticCurve(_) => jsonwebtoken::AlgorithmFamily::Ec,
            AlgorithmParameters::OctetKeyPair(_) => jsonwebtoken::AlgorithmFamily::Ed,
            // Shared secrets are never published, and never accepted.
            AlgorithmParameters::OctetKey(_) => continue,
        };
        let alg = match jwk.common.key_algorithm {
            Some(a) => match Algorithm::from_str(&a.to_string()) {
                Ok(a) => Some(a),
                Err(_) => continue,
            },
            None => None,
        };
        let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let key = Arc::new(Key {
            decoding,
            alg,
            family,
        });
        match jwk.common.key_id {
            Some(kid) => {
                keys.by_kid.insert(kid, key);
            }
            None => keys.unnamed.push(key),
        }
    }
    Ok(keys)
}

/// `max-age` of a `Cache-Control` header.
fn max_age(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::CACHE_CONTROL)?.to_str().ok()?;
    value.split(',').find_map(|d| {
        let (k, v) = d.trim().split_once('=')?;
        k.eq_ignore_ascii_case("max-age")
            .then(|| v.trim().parse().ok().map(Duration::from_secs))?
    })
}

impl KeyStore {
    pub(crate) fn new(
        http: HttpClient,
        source: KeySource,
        min_refresh_interval: Duration,
        max_refresh_interval: Duration,
    ) -> Self {
        KeyStore {
            http,
            source,
            keys: RwLock::new(Arc::new(Keys::default())),
            last_attempt: tokio::sync::Mutex::new(None),
            min_refresh_interval,
            max_refresh_interval,
            background: AtomicBool::new(false),
        }
    }

    fn lookup(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner()).clone();
        match kid {
            Some(kid) => keys.by_kid.get(kid).cloned(),
            // Without a `kid`, only an unambiguous set will do.
            None => match (keys.by_kid.len(), keys.unnamed.as_slice()) {
                (0, [only]) => Some(only.clone()),
                (1, []) => keys.by_kid.values().next().cloned(),
                _ => None,
            },
        }
    }

    /// The key a token names, refreshing the set (rate-limited) when it is unknown.
    pub(crate) async fn key(self: &Arc<Self>, kid: Option<&str>) -> Option<Arc<Key>> {
        if let Some(k) = self.lookup(kid) {
            return Some(k);
        }
        {
            let mut last = self.last_attempt.lock().await;
            // Another request may have refreshed while this one waited.
            if let Some(k) = self.lookup(kid) {
                return Some(k);
            }
            if last.is_some_and(|t| t.elapsed() < self.min_refresh_interval) {
                tracing::debug!("unknown signing key; JWKS refreshed too recently to retry");
                return None;
            }
            *last = Some(Instant::now());
            if let Err(e) = self.refresh().await {
                tracing::warn!(error = %e, "JWKS refresh failed; keeping the cached keys");
            }
        }
        self.lookup(kid)
    }

    async fn jwks_uri(&self) -> Result<String, String> {
        match &self.source {
            KeySource::Url(u) => Ok(u.clone()),
            KeySource::Discovered(d) => d
                .metadata()
                .await?
                .jwks_uri
                .clone()
                .ok_or_else(|| "the issuer's metadata has no jwks_uri".to_owned()),
        }
    }

    /// Fetches the set and replaces the cache; returns the set's `max-age`.
    async fn refresh(self: &Arc<Self>) -> Result<(), String> {
        let url = self.jwks_uri().await?;
        let response = self
            .http
            .get_json(&url)
            .await
            .map_err(|e| format!("{url}: {}", crate::error::chain(&*e)))?;
        if !response.status.is_success() {
            return Err(format!("{url}: HTTP {}", response.status));
        }
        let age = max_age(&response.headers);
        let keys = parse_set(&response.body)?;
        tracing::debug!(
            keys = keys.by_kid.len() + keys.unnamed.len(),
            "JWKS refreshed"
        );
        *self.keys.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(keys);
        self.start_background(age);
        Ok(())
    }

    /// Refreshes the set in the background, before its `max-age` (at the latest every
    /// `max_refresh_interval`), for as long as the store lives.
    fn start_background(self: &Arc<Self>, age: Option<Duration>) {
        if self.background.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.background.store(false, Ordering::Release);
            return;
        };
        let every = age
            .map(|a| a.mul_f64(0.75))
            .unwrap_or(self.max_refresh_interval)
            .clamp(
                Duration::from_secs(1),
                self.max_refresh_interval.max(Duration::from_secs(1)),
            );
        let store: Weak<KeyStore> = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(store) = store.upgrade() else { return };
                if let Err(e) = store.refresh().await {
                    tracing::warn!(error = %e, "background JWKS refresh failed; keeping the cached keys");
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_filters_sets() {
        let body = serde_json::json!({"keys": [
            {"kty":"RSA","kid":"r","use":"sig","alg":"RS256","n":"sXch","e":"AQAB"},
            {"kty":"RSA","kid":"enc","use":"enc","n":"sXch","e":"AQAB"},
            {"kty":"oct","kid":"secret","k":"c2VjcmV0"},
            {"kty":"EC","kid":"e","crv":"P-256",
             "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty":"weird","kid":"w"}
        ]});
        let keys = parse_set(body.to_string().as_bytes()).unwrap();
        let mut kids: Vec<&str> = keys.by_kid.keys().map(String::as_str).collect();
        kids.sort();
        assert_eq!(kids, ["e", "r"]);
        assert_eq!(keys.by_kid["r"].alg, Some(Algorithm::RS256));
        assert_eq!(keys.by_kid["e"].family, jsonwebtoken::AlgorithmFamily::Ec);
        assert!(parse_set(b"{}").is_err());
    }

    #[test]
    fn reads_max_age() {
        let mut h = http::HeaderMap::new();
        h.insert("cache-control", "public, max-age=300".parse().unwrap());
        assert_eq!(max_age(&h), Some(Duration::from_secs(300)));
        h.insert("cache-control", "no-cache".parse().unwrap());
        assert_eq!(max_age(&h), None);
    }
}

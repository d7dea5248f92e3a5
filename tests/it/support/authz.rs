//! A real local OAuth authorization server for the authorization tests: RFC 8414 and OpenID
//! discovery, a JWKS with RSA and EC keys (generated in-process at test time), token minting,
//! key rotation, an outage switch for the JWKS endpoint, and RFC 7662 introspection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use p256::pkcs8::EncodePrivateKey as _;
use rsa::pkcs1::EncodeRsaPrivateKey as _;
use rsa::pkcs8::{EncodePublicKey as _, LineEnding};
use rsa::traits::PublicKeyParts as _;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// The client the resource server introspects as.
pub const INTROSPECTION_CLIENT: (&str, &str) = ("mcp-resource-server", "introspection-secret");

/// A signing key and its public JWK.
#[derive(Clone)]
pub struct SigningKey {
    pub kid: String,
    pub alg: Algorithm,
    encoding: EncodingKey,
    pub jwk: Value,
    /// PEM of the public key (for the HS256-with-public-key attack).
    pub public_pem: String,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// RSA keys are slow to generate: a few per test process, shared.
fn rsa_pool() -> &'static Vec<rsa::RsaPrivateKey> {
    static POOL: OnceLock<Vec<rsa::RsaPrivateKey>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut rng = rand::thread_rng();
        (0..3)
            .map(|_| rsa::RsaPrivateKey::new(&mut rng, 2048).expect("RSA key generation"))
            .collect()
    })
}

/// The `n`-th RSA key of the pool (0..3) as an RS256 key named `kid`.
pub fn rsa_key(n: usize, kid: &str) -> SigningKey {
    let private = &rsa_pool()[n];
    let public = private.to_public_key();
    let der = private.to_pkcs1_der().unwrap();
    SigningKey {
        kid: kid.to_owned(),
        alg: Algorithm::RS256,
        encoding: EncodingKey::from_rsa_der(der.as_bytes()),
        jwk: json!({
            "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": b64(&public.n().to_bytes_be()),
            "e": b64(&public.e().to_bytes_be()),
        }),
        public_pem: public.to_public_key_pem(LineEnding::LF).unwrap(),
    }
}

/// A fresh P-256 key as an ES256 key named `kid`.
pub fn ec_key(kid: &str) -> SigningKey {
    let secret = p256::SecretKey::random(&mut rand::thread_rng());
    let point = secret.public_key().to_encoded_point(false);
    let der = secret.to_pkcs8_der().unwrap();
    SigningKey {
        kid: kid.to_owned(),
        alg: Algorithm::ES256,
        encoding: EncodingKey::from_ec_der(der.as_bytes()),
        jwk: json!({
            "kty": "EC", "kid": kid, "use": "sig", "crv": "P-256",
            "x": b64(point.x().unwrap()),
            "y": b64(point.y().unwrap()),
        }),
        public_pem: String::new(),
    }
}

impl SigningKey {
    /// Signs `claims` with this key (header `kid` and `alg` set).
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

struct AuthzState {
    issuer: String,
    /// Keys whose public halves the JWKS lists.
    published: Mutex<Vec<SigningKey>>,
    jwks_down: AtomicBool,
    jwks_max_age: Mutex<Option<u64>>,
    jwks_fetches: AtomicU64,
    introspections: AtomicU64,
    /// Introspection answers by opaque token.
    opaque: Mutex<HashMap<String, Value>>,
}

/// The running authorization server; stopped on drop.
pub struct Authz {
    pub issuer: String,
    state: Arc<AuthzState>,
    /// The key tokens are signed with by default (published).
    pub rsa: SigningKey,
    /// A published EC key.
    pub ec: SigningKey,
    task: JoinHandle<()>,
}

impl Drop for Authz {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn metadata(State(s): State<Arc<AuthzState>>) -> Json<Value> {
    let i = &s.issuer;
    Json(json!({
        "issuer": i,
        "authorization_endpoint": format!("{i}/authorize"),
        "token_endpoint": format!("{i}/token"),
        "jwks_uri": format!("{i}/jwks"),
        "introspection_endpoint": format!("{i}/introspect"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    }))
}

async fn jwks(State(s): State<Arc<AuthzState>>) -> Response {
    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    if s.jwks_down.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response();
    }
    let keys: Vec<Value> = s
        .published
        .lock()
        .unwrap()
        .iter()
        .map(|k| k.jwk.clone())
        .collect();
    let mut r = Json(json!({ "keys": keys })).into_response();
    if let Some(age) = *s.jwks_max_age.lock().unwrap() {
        r.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_str(&format!("max-age={age}")).unwrap(),
        );
    }
    r
}

async fn introspect(
    State(s): State<Arc<AuthzState>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let form: HashMap<String, String> = oauth2::url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    s.introspections.fetch_add(1, Ordering::SeqCst);
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!(
            "{}:{}",
            INTROSPECTION_CLIENT.0, INTROSPECTION_CLIENT.1
        ))
    );
    if headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        != Some(&expected)
    {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
    let token = form.get("token").cloned().unwrap_or_default();
    let answer = s
        .opaque
        .lock()
        .unwrap()
        .get(&token)
        .cloned()
        .unwrap_or_else(|| json!({"active": false}));
    Json(answer).into_response()
}

impl Authz {
    /// Starts the server on `127.0.0.1:0` with one RSA and one EC key published.
    pub async fn start() -> Authz {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        Authz::start_on(issuer, |app| {
            tokio::spawn(async move {
                axum::serve(listener, app).await.unwrap();
            })
        })
    }

    /// Like [`Authz::start`], over HTTPS with a certificate for `localhost` signed by `ca`:
    /// the issuer is `https://localhost:PORT`.
    pub async fn start_tls(ca: &super::tls::TestCa) -> Authz {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!(
            "https://localhost:{}",
            listener.local_addr().unwrap().port()
        );
        Authz::start_on(issuer, |app| ca.serve(listener, app))
    }

    fn start_on(issuer: String, serve: impl FnOnce(Router) -> JoinHandle<()>) -> Authz {
        let rsa = rsa_key(0, "rsa-1");
        let ec = ec_key("ec-1");
        let state = Arc::new(AuthzState {
            issuer: issuer.clone(),
            published: Mutex::new(vec![rsa.clone(), ec.clone()]),
            jwks_down: AtomicBool::new(false),
            jwks_max_age: Mutex::new(None),
            jwks_fetches: AtomicU64::new(0),
            introspections: AtomicU64::new(0),
            opaque: Mutex::new(HashMap::new()),
        });
        let app = Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/.well-known/openid-configuration", get(metadata))
            .route("/jwks", get(jwks))
            .route("/introspect", post(introspect))
            .with_state(state.clone());
        let task = serve(app);
        Authz {
            issuer,
            state,
            rsa,
            ec,
            task,
        }
    }

    /// Standard claims for `audience` with `scope`, valid for an hour; every call gets its
    /// own `jti`, so no two minted tokens are alike.
    pub fn claims(&self, audience: &str, scope: &str) -> Value {
        static JTI: AtomicU64 = AtomicU64::new(0);
        json!({
            "jti": format!("jti-{}", JTI.fetch_add(1, Ordering::SeqCst)),
            "iss": self.issuer,
            "sub": "user-42",
            "aud": audience,
            "client_id": "test-client",
            "scope": scope,
            "iat": now(),
            "exp": now() + 3600,
        })
    }

    /// A valid RS256 token for `audience` with `scope`.
    pub fn token(&self, audience: &str, scope: &str) -> String {
        self.rsa.sign(&self.claims(audience, scope))
    }

    /// Publishes `key` in the JWKS (rotation), keeping the others.
    pub fn publish(&self, key: &SigningKey) {
        self.state.published.lock().unwrap().push(key.clone());
    }

    /// Takes the JWKS endpoint down (`503`) or brings it back.
    pub fn set_jwks_down(&self, down: bool) {
        self.state.jwks_down.store(down, Ordering::SeqCst);
    }

    /// Sends `Cache-Control: max-age` with the JWKS.
    pub fn set_jwks_max_age(&self, secs: u64) {
        *self.state.jwks_max_age.lock().unwrap() = Some(secs);
    }

    /// How many times the JWKS was requested.
    pub fn jwks_fetches(&self) -> u64 {
        self.state.jwks_fetches.load(Ordering::SeqCst)
    }

    /// How many introspection requests arrived.
    pub fn introspections(&self) -> u64 {
        self.state.introspections.load(Ordering::SeqCst)
    }

    /// Registers an opaque token and the introspection answer for it.
    pub fn register_opaque(&self, token: &str, answer: Value) {
        self.state
            .opaque
            .lock()
            .unwrap()
            .insert(token.to_owned(), answer);
    }
}

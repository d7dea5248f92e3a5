//! Bearer-token validation with a cached key: what the resource server adds to each request.
//!
//! - `auth/verify_rs256`: `ResourceServer::verify_token` of an RS256 (2048-bit) JWT whose
//!   key is already cached: header, key lookup, signature, `iss`/`aud`/`exp`/`nbf`, claims
//!   into a `Principal`;
//! - `auth/verify_es256`: the same with an ES256 (P-256) JWT;
//! - `auth/layer_rs256`: the whole `AuthService` around a no-op service: bearer header,
//!   scope rules from `Mcp-Method`/`Mcp-Name`, verification, scope check, extensions;
//! - `auth/verify_rs256_repeat`: a token seen before, answered from the verified-token cache
//!   (the default; the benchmarks above turn it off to measure the checks themselves).
//!
//! The keys are generated at start and served as a JWKS from a local HTTP server; the first
//! verification fetches it, every measured one uses the cache. Run with
//! `cargo bench --bench auth`.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use http::{Request, Response};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use p256::pkcs8::EncodePrivateKey as _;
use rsa::pkcs1::EncodeRsaPrivateKey as _;
use rsa::traits::PublicKeyParts as _;
use serde_json::{Value, json};
use stateless_mcp::auth::ResourceServer;
use tokio::runtime::Runtime;
use tower::{Service as _, ServiceExt as _};

const RESOURCE: &str = "https://mcp.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn sign(alg: Algorithm, kid: &str, key: &EncodingKey) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({
        "iss": ISSUER, "sub": "user-42", "aud": RESOURCE, "client_id": "bench",
        "scope": "mcp files:read", "iat": now, "exp": now + 86_400,
    });
    let mut header = Header::new(alg);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, &claims, key).unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let mut rng = rand::thread_rng();
    let rsa_key = rsa::RsaPrivateKey::new(&mut rng, 2048).unwrap();
    let ec_key = p256::SecretKey::random(&mut rng);
    let point = ec_key.public_key().to_encoded_point(false);
    let jwks: Value = json!({"keys": [
        {"kty": "RSA", "kid": "r", "alg": "RS256", "use": "sig",
         "n": b64(&rsa_key.n().to_bytes_be()), "e": b64(&rsa_key.e().to_bytes_be())},
        {"kty": "EC", "kid": "e", "crv": "P-256", "use": "sig",
         "x": b64(point.x().unwrap()), "y": b64(point.y().unwrap())},
    ]});
    let rs_token = sign(
        Algorithm::RS256,
        "r",
        &EncodingKey::from_rsa_der(rsa_key.to_pkcs1_der().unwrap().as_bytes()),
    );
    let es_token = sign(
        Algorithm::ES256,
        "e",
        &EncodingKey::from_ec_der(ec_key.to_pkcs8_der().unwrap().as_bytes()),
    );

    let jwks_uri = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let jwks = jwks.clone();
                async move { axum::Json(jwks) }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    });
    let uncached = ResourceServer::builder(RESOURCE)
        .issuer(ISSUER)
        .jwks_uri(jwks_uri.clone())
        .required_scopes(["mcp"])
        .jwt_cache(std::time::Duration::ZERO, 1)
        .build()
        .unwrap();
    let cached = ResourceServer::builder(RESOURCE)
        .issuer(ISSUER)
        .jwks_uri(jwks_uri)
        .required_scopes(["mcp"])
        .build()
        .unwrap();
    let rs = &uncached;
    rt.block_on(async {
        assert!(
            rs.verify_token(&rs_token).await.is_some(),
            "RS256 token verifies"
        );
        assert!(
            rs.verify_token(&es_token).await.is_some(),
            "ES256 token verifies"
        );
    });

    let mut g = c.benchmark_group("auth");
    g.bench_function("verify_rs256", |b| {
        b.iter(|| rt.block_on(async { black_box(rs.verify_token(black_box(&rs_token)).await) }))
    });
    g.bench_function("verify_es256", |b| {
        b.iter(|| rt.block_on(async { black_box(rs.verify_token(black_box(&es_token)).await) }))
    });
    let inner = tower::service_fn(|_req: Request<String>| async {
        Ok::<_, Infallible>(Response::new(String::new()))
    });
    let mut service = tower::Layer::layer(&rs.layer(), inner);
    let bearer = format!("Bearer {rs_token}");
    g.bench_function("layer_rs256", |b| {
        b.iter(|| {
            rt.block_on(async {
                let req = Request::post("/mcp")
                    .header("authorization", &bearer)
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "read_file")
                    .body(String::new())
                    .unwrap();
                let svc = service.ready().await.unwrap();
                let resp = svc.call(req).await.unwrap();
                assert_eq!(resp.status(), 200);
                black_box(resp)
            })
        })
    });
    g.bench_function("verify_rs256_repeat", |b| {
        b.iter(|| rt.block_on(async { black_box(cached.verify_token(black_box(&rs_token)).await) }))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

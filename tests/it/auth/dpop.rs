//! DPoP (RFC 9449) end to end: a real authorization-server process (`support::dpop`, a
//! Python issuer that checks the client's proof at its token endpoint and mints tokens
//! bound to its key: JWTs with `cnf.jkt`, and opaque tokens introspected with `cnf`),
//! clients signing real ES256 proofs, and reference-binary replicas sharing a real
//! `redis-server` as their replay store. Both eras go through the same check.

use serde_json::{Value, json};

use crate::support::brokers::RedisServer;
use crate::support::dpop::{DpopKey, Format, Issuer, b64};
use crate::support::process::{ServerProcess, spawn_server};
use crate::support::{Client, checked_messages, request_parts};

/// The public URL of the resource (as behind a proxy: the replicas listen elsewhere).
const RESOURCE: &str = "http://mcp.test/mcp";
const KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// A replica of the reference binary: DPoP `policy`, its replay store on `redis`,
/// introspection at the issuer, and `extra` flags.
async fn replica(
    issuer: &Issuer,
    redis: &RedisServer,
    policy: &str,
    extra: &[&str],
) -> ServerProcess {
    let mut args: Vec<String> = [
        "--auth-issuer",
        &issuer.url,
        "--resource",
        RESOURCE,
        "--auth-scopes",
        "mcp",
        "--auth-introspection-client-id",
        "mcp-resource-server",
        "--auth-introspection-client-secret",
        "introspection-secret",
        "--auth-dpop",
        policy,
        "--replay-store",
        &redis.url(),
        "--state-keys",
        KEYS,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        spawn_server(&args)
    })
    .await
    .unwrap()
}

/// The answer to one request.
struct Answer {
    status: u16,
    challenges: Vec<String>,
    nonce: Option<String>,
    body: String,
}

impl Answer {
    fn refused_with(&self, error: &str) {
        assert_eq!(self.status, 401, "{}", self.body);
        assert_eq!(self.challenges.len(), 1, "{:?}", self.challenges);
        let c = &self.challenges[0];
        assert!(c.starts_with("DPoP algs=\""), "{c}");
        assert!(c.contains(&format!("error=\"{error}\"")), "{c}");
        let body: Value = serde_json::from_str(&self.body).unwrap();
        assert_eq!(body["error"], error, "{}", self.body);
    }
}

/// `tools/list` on `server` with `authorization` and `dpop` headers (any number of each).
async fn list(server: &ServerProcess, authorization: &str, dpop: &[String]) -> Answer {
    let (mut headers, body) = request_parts("tools/list", json!(1), json!({}));
    headers.push(("authorization".into(), authorization.into()));
    for d in dpop {
        headers.push(("dpop".into(), d.clone()));
    }
    let r = Client::new(&server.url).post_raw(&headers, body).await;
    let status = r.status().as_u16();
    let challenges = r
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let nonce = r
        .headers()
        .get("dpop-nonce")
        .map(|v| v.to_str().unwrap().to_owned());
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = r.text().await.unwrap();
    if status == 200 {
        let messages = checked_messages(&ct, &body, Some("tools/list"));
        assert!(messages[0]["result"]["tools"].is_array(), "{body}");
    }
    Answer {
        status,
        challenges,
        nonce,
        body,
    }
}

fn dpop(token: &str) -> String {
    format!("DPoP {token}")
}

#[tokio::test(flavor = "multi_thread")]
async fn proofs_are_checked_claim_by_claim_and_bound_tokens_only_go_with_their_key() {
    let issuer = Issuer::start();
    let redis = RedisServer::start();
    let (a, b) = (
        replica(&issuer, &redis, "accept", &[]).await,
        replica(&issuer, &redis, "accept", &[]).await,
    );
    let key = DpopKey::new();
    let jwt = issuer.token(Some(&key), RESOURCE, "mcp", Format::Jwt).await;
    let opaque = issuer
        .token(Some(&key), RESOURCE, "mcp", Format::Opaque)
        .await;

    // Valid proofs, with a JWT (cnf.jkt) and with an introspected token (cnf), on either
    // replica.
    for (server, token) in [(&a, &jwt), (&b, &opaque), (&a, &opaque)] {
        let proof = key.proof("POST", RESOURCE, Some(token), None);
        let ok = list(server, &dpop(token), &[proof]).await;
        assert_eq!(ok.status, 200, "{}", ok.body);
    }
    // htu is compared normalised, without query and fragment.
    let proof = key.proof("POST", "HTTP://MCP.test:80/mcp?x=1#f", Some(&jwt), None);
    assert_eq!(list(&a, &dpop(&jwt), &[proof]).await.status, 200);

    // A replayed proof is refused on the other replica (the jti is claimed in Redis).
    let proof = key.proof("POST", RESOURCE, Some(&jwt), None);
    assert_eq!(
        list(&a, &dpop(&jwt), std::slice::from_ref(&proof))
            .await
            .status,
        200
    );
    let replayed = list(&b, &dpop(&jwt), std::slice::from_ref(&proof)).await;
    replayed.refused_with("invalid_dpop_proof");
    assert!(replayed.body.contains("used before"), "{}", replayed.body);
    list(&a, &dpop(&jwt), &[proof])
        .await
        .refused_with("invalid_dpop_proof");

    // Each broken claim or header, refused with invalid_dpop_proof.
    let claims = || key.claims("POST", RESOURCE, Some(&jwt), None);
    let header = || key.header();
    let with = |mut v: Value, k: &str, x: Value| {
        if x.is_null() {
            v.as_object_mut().unwrap().remove(k);
        } else {
            v[k] = x;
        }
        v
    };
    let other = DpopKey::new();
    let mut private_jwk = key.jwk.clone();
    private_jwk["d"] = json!(b64(&[7u8; 32]));
    let now = crate::support::authz::now();
    let broken: Vec<(&str, String)> = vec![
        (
            "typ",
            key.sign(&with(header(), "typ", json!("JWT")), &claims()),
        ),
        (
            "no typ",
            key.sign(&with(header(), "typ", Value::Null), &claims()),
        ),
        (
            "alg none",
            key.sign(&with(header(), "alg", json!("none")), &claims()),
        ),
        (
            "alg HS256",
            key.sign(&with(header(), "alg", json!("HS256")), &claims()),
        ),
        (
            "no jwk",
            key.sign(&with(header(), "jwk", Value::Null), &claims()),
        ),
        (
            "private jwk",
            key.sign(&with(header(), "jwk", private_jwk), &claims()),
        ),
        ("signed by another key", other.sign(&header(), &claims())),
        (
            "htm",
            key.sign(&header(), &with(claims(), "htm", json!("GET"))),
        ),
        (
            "htu path",
            key.sign(
                &header(),
                &with(claims(), "htu", json!("http://mcp.test/other")),
            ),
        ),
        (
            "htu host",
            key.sign(
                &header(),
                &with(claims(), "htu", json!("http://evil.test/mcp")),
            ),
        ),
        (
            "no htu",
            key.sign(&header(), &with(claims(), "htu", Value::Null)),
        ),
        (
            "iat old",
            key.sign(&header(), &with(claims(), "iat", json!(now - 600))),
        ),
        (
            "iat future",
            key.sign(&header(), &with(claims(), "iat", json!(now + 600))),
        ),
        (
            "no iat",
            key.sign(&header(), &with(claims(), "iat", Value::Null)),
        ),
        (
            "no jti",
            key.sign(&header(), &with(claims(), "jti", Value::Null)),
        ),
        (
            "no ath",
            key.sign(&header(), &with(claims(), "ath", Value::Null)),
        ),
        (
            "ath of another token",
            key.sign(&header(), &with(claims(), "ath", json!(b64(&[1u8; 32])))),
        ),
        ("not a JWS", "abc.def".to_owned()),
    ];
    for (what, proof) in broken {
        let r = list(&a, &dpop(&jwt), &[proof]).await;
        assert_eq!(r.status, 401, "{what}: {}", r.body);
        assert!(
            r.challenges[0].contains("error=\"invalid_dpop_proof\""),
            "{what}: {:?}",
            r.challenges
        );
    }
    // No proof, or two.
    list(&a, &dpop(&jwt), &[])
        .await
        .refused_with("invalid_dpop_proof");
    let two = vec![
        key.proof("POST", RESOURCE, Some(&jwt), None),
        key.proof("POST", RESOURCE, Some(&jwt), None),
    ];
    list(&a, &dpop(&jwt), &two)
        .await
        .refused_with("invalid_dpop_proof");

    // The token is bound to another key than the proof's: invalid_token.
    let proof = other.proof("POST", RESOURCE, Some(&jwt), None);
    list(&a, &dpop(&jwt), &[proof])
        .await
        .refused_with("invalid_token");
    // An unbound token cannot be used with DPoP.
    let plain = issuer.token(None, RESOURCE, "mcp", Format::Jwt).await;
    let proof = key.proof("POST", RESOURCE, Some(&plain), None);
    list(&a, &dpop(&plain), &[proof])
        .await
        .refused_with("invalid_token");

    // A bound token used as a bearer token is refused (JWT and introspected); an unbound
    // one is accepted (policy: accept both).
    for token in [&jwt, &opaque] {
        let r = list(&a, &format!("Bearer {token}"), &[]).await;
        assert_eq!(r.status, 401, "{}", r.body);
        assert!(
            r.challenges[0].starts_with("Bearer error=\"invalid_token\""),
            "{:?}",
            r.challenges
        );
        assert!(
            r.challenges[1].starts_with("DPoP algs=\""),
            "{:?}",
            r.challenges
        );
        assert!(r.body.contains("bound to a DPoP key"), "{}", r.body);
    }
    assert_eq!(list(&a, &format!("Bearer {plain}"), &[]).await.status, 200);
    // Without a token: both schemes are offered.
    let (headers, body) = request_parts("tools/list", json!(1), json!({}));
    let r = Client::new(&a.url).post_raw(&headers, body).await;
    assert_eq!(r.status(), 401);
    let offered: Vec<&str> = r
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(
        offered[0].starts_with("Bearer resource_metadata="),
        "{offered:?}"
    );
    assert!(offered[1].starts_with("DPoP algs=\"ES256"), "{offered:?}");

    // The metadata advertises DPoP.
    let meta: Value = crate::support::get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        a.base
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(meta["dpop_bound_access_tokens_required"], false);
    assert!(
        meta["dpop_signing_alg_values_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("ES256")),
        "{meta}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_nonces_made_on_one_replica_are_accepted_on_another() {
    let issuer = Issuer::start();
    let redis = RedisServer::start();
    let nonces = ["--auth-dpop-nonce-secs", "60"];
    let (c, d) = (
        replica(&issuer, &redis, "require", &nonces).await,
        replica(&issuer, &redis, "require", &nonces).await,
    );
    let key = DpopKey::new();
    let token = issuer.token(Some(&key), RESOURCE, "mcp", Format::Jwt).await;

    // Without a nonce: use_dpop_nonce, and one to use.
    let first = list(
        &c,
        &dpop(&token),
        &[key.proof("POST", RESOURCE, Some(&token), None)],
    )
    .await;
    first.refused_with("use_dpop_nonce");
    let nonce = first.nonce.expect("a DPoP-Nonce with the refusal");
    // The nonce from replica c is good on replica d, and the answer carries the nonce to
    // use next.
    let proof = key.proof("POST", RESOURCE, Some(&token), Some(&nonce));
    let ok = list(&d, &dpop(&token), &[proof]).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(ok.nonce.is_some());
    let proof = key.proof("POST", RESOURCE, Some(&token), Some(&nonce));
    assert_eq!(list(&c, &dpop(&token), &[proof]).await.status, 200);
    // A made-up nonce is not.
    let proof = key.proof(
        "POST",
        RESOURCE,
        Some(&token),
        Some("v1.k1.bm90LWEtbm9uY2U"),
    );
    list(&d, &dpop(&token), &[proof])
        .await
        .refused_with("use_dpop_nonce");

    // Policy require: bearer tokens are refused, in a DPoP challenge.
    let plain = issuer.token(None, RESOURCE, "mcp", Format::Jwt).await;
    let r = list(&c, &format!("Bearer {plain}"), &[]).await;
    r.refused_with("invalid_token");
    let meta: Value = crate::support::get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        c.base
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(meta["dpop_bound_access_tokens_required"], true);

    // The 2025-11-25 era goes through the same check: initialize with a proof.
    let proof = key.proof("POST", RESOURCE, Some(&token), Some(&nonce));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "dpop-test", "version": "1"}}});
    let r = Client::new(&c.url)
        .post_raw(
            &[
                ("content-type".into(), "application/json".into()),
                (
                    "accept".into(),
                    "application/json, text/event-stream".into(),
                ),
                ("authorization".into(), dpop(&token)),
                ("dpop".into(), proof),
            ],
            init.to_string(),
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("mcp-session-id"));
}

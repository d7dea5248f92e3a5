//! Token validation: each refusal's exact status and challenge, and what an admitted
//! request's handler sees.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::{Value, json};

use super::{Protected, protected};
use crate::support::authz::now;

fn whoami(ex: &crate::support::Exchange) -> Value {
    let text = ex.result()["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

async fn fixture() -> Protected {
    protected(|b| b).await
}

#[tokio::test]
async fn no_token_is_challenged_with_metadata_and_scope() {
    let p = fixture().await;
    let r = p.send(None, "tools/list", json!({})).await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.challenge.clone().unwrap(),
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp\"",
            p.metadata_url()
        )
    );
    assert_eq!(r.json()["error"], "invalid_token");
    // The challenge names every scope the operation needs.
    let r = p.send_tool(None, "write_file").await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.challenge.clone().unwrap(),
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp files:write\"",
            p.metadata_url()
        )
    );
    // Another scheme is no bearer token.
    let (mut h, body) = super::request("tools/list", json!({}));
    h.push(("authorization".into(), "Basic dXNlcjpwYXNz".into()));
    assert_eq!(p.raw("", h, body).await.status, 401);
}

#[tokio::test]
async fn malformed_header_is_an_invalid_request() {
    let p = fixture().await;
    for value in ["Bearer", "Bearer a b", "Bearer a,b"] {
        let (mut h, body) = super::request("tools/list", json!({}));
        h.push(("authorization".into(), value.into()));
        let r = p.raw("", h, body).await;
        assert_eq!(r.status, 400, "{value:?}");
        assert_eq!(
            r.challenge.clone().unwrap(),
            format!(
                "Bearer error=\"invalid_request\", resource_metadata=\"{}\", scope=\"mcp\", error_description=\"The Authorization header is not of the form `Bearer <token>`\"",
                p.metadata_url()
            ),
            "{value:?}"
        );
        assert_eq!(r.json()["error"], "invalid_request");
    }
}

#[tokio::test]
async fn token_in_the_query_string_is_refused() {
    let p = fixture().await;
    let token = p.token("mcp");
    let (h, body) = super::request("tools/list", json!({}));
    let r = p
        .raw(&format!("?access_token={token}"), h.clone(), body.clone())
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.challenge.clone().unwrap(),
        format!(
            "Bearer error=\"invalid_request\", resource_metadata=\"{}\", scope=\"mcp\", error_description=\"Access tokens are not accepted in the query string; send them in the Authorization header\"",
            p.metadata_url()
        )
    );
    // Even next to a valid header.
    let mut with_header = h;
    with_header.push(("authorization".into(), format!("Bearer {token}")));
    let r = p
        .raw(&format!("?access_token={token}"), with_header, body)
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn expired_and_not_yet_valid_tokens_are_refused() {
    let p = fixture().await;
    let mut claims = p.authz.claims(&p.resource, "mcp");
    claims["exp"] = json!(now() - 600);
    let r = p
        .send(Some(&p.authz.rsa.sign(&claims)), "tools/list", json!({}))
        .await;
    p.assert_invalid_token(&r, "The token has expired", "mcp");

    let mut claims = p.authz.claims(&p.resource, "mcp");
    claims["nbf"] = json!(now() + 600);
    let r = p
        .send(Some(&p.authz.rsa.sign(&claims)), "tools/list", json!({}))
        .await;
    p.assert_invalid_token(&r, "The token is not valid yet", "mcp");

    // Within the leeway (60 s by default), both are accepted.
    let mut claims = p.authz.claims(&p.resource, "mcp");
    claims["exp"] = json!(now() - 5);
    claims["nbf"] = json!(now() + 5);
    p.call(&p.authz.rsa.sign(&claims), "tools/list", json!({}))
        .await;

    let mut claims = p.authz.claims(&p.resource, "mcp");
    claims.as_object_mut().unwrap().remove("exp");
    let r = p
        .send(Some(&p.authz.rsa.sign(&claims)), "tools/list", json!({}))
        .await;
    p.assert_invalid_token(
        &r,
        "The token lacks a required claim (exp, iss, aud)",
        "mcp",
    );
}

#[tokio::test]
async fn wrong_issuer_and_wrong_audience_are_refused() {
    let p = fixture().await;
    let mut claims = p.authz.claims(&p.resource, "mcp");
    claims["iss"] = json!("https://evil.example.com");
    let r = p
        .send(Some(&p.authz.rsa.sign(&claims)), "tools/list", json!({}))
        .await;
    p.assert_invalid_token(&r, "The token was issued by another issuer", "mcp");

    for aud in [
        json!("https://other.example.com/mcp"),
        json!(["https://other.example.com"]),
    ] {
        let mut claims = p.authz.claims(&p.resource, "mcp");
        claims["aud"] = aud;
        let r = p
            .send(Some(&p.authz.rsa.sign(&claims)), "tools/list", json!({}))
            .await;
        p.assert_invalid_token(
            &r,
            "The token's audience does not include this resource",
            "mcp",
        );
    }
    // An audience list that includes this resource is fine.
    let mut claims = p.authz.claims(&p.resource, "mcp");
    claims["aud"] = json!(["https://other.example.com", p.resource]);
    p.call(&p.authz.rsa.sign(&claims), "tools/list", json!({}))
        .await;
}

#[tokio::test]
async fn forged_tokens_are_refused() {
    let p = fixture().await;
    let claims = p.authz.claims(&p.resource, "mcp files");
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());

    // alg: none, no signature.
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT","kid":"rsa-1"}"#);
    let r = p
        .send(
            Some(&format!("{header}.{payload}.")),
            "tools/list",
            json!({}),
        )
        .await;
    p.assert_invalid_token(
        &r,
        "The token is malformed or uses an unsupported algorithm",
        "mcp",
    );

    // HS256 keyed with the RSA public key (the classic key-confusion attack).
    let mut h = Header::new(jsonwebtoken::Algorithm::HS256);
    h.kid = Some("rsa-1".into());
    let forged = jsonwebtoken::encode(
        &h,
        &claims,
        &EncodingKey::from_secret(p.authz.rsa.public_pem.as_bytes()),
    )
    .unwrap();
    let r = p.send(Some(&forged), "tools/list", json!({})).await;
    p.assert_invalid_token(&r, "The token's algorithm HS256 is not accepted", "mcp");

    // RS256 header on an EC key.
    let mut h = Header::new(jsonwebtoken::Algorithm::RS256);
    h.kid = Some("ec-1".into());
    let valid = p.token("mcp");
    let parts: Vec<&str> = valid.split('.').collect();
    let swapped = format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(serde_json::to_string(&h).unwrap()),
        parts[1],
        parts[2]
    );
    let r = p.send(Some(&swapped), "tools/list", json!({})).await;
    p.assert_invalid_token(
        &r,
        "The token's algorithm does not match its signing key",
        "mcp",
    );

    // A valid token whose payload was changed (more scopes).
    let mut elevated = p.authz.claims(&p.resource, "mcp");
    elevated["scope"] = json!("mcp files admin");
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(elevated.to_string()),
        parts[2]
    );
    let r = p.send(Some(&tampered), "tools/list", json!({})).await;
    p.assert_invalid_token(&r, "The token's signature is invalid", "mcp");

    // Garbage.
    let r = p.send(Some("not-a-jwt"), "tools/list", json!({})).await;
    p.assert_invalid_token(&r, "The token is malformed", "mcp");
}

#[tokio::test]
async fn rsa_and_ec_tokens_are_accepted_and_the_handler_sees_the_principal() {
    let p = fixture().await;
    for token in [
        p.token("mcp files:read"),
        p.authz
            .ec
            .sign(&p.authz.claims(&p.resource, "mcp files:read")),
    ] {
        let ex = p.call_tool(&token, "whoami").await;
        assert_eq!(
            whoami(&ex),
            json!({
                "subject": "user-42",
                "client_id": "test-client",
                "issuer": p.authz.issuer,
                "scopes": ["mcp", "files:read"],
                "tenant": null,
            })
        );
    }
}

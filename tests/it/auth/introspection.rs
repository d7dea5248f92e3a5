//! Opaque tokens through RFC 7662 introspection, cached.

use serde_json::json;

use super::protected;
use crate::support::authz::{INTROSPECTION_CLIENT, now};

#[tokio::test]
async fn active_tokens_are_admitted_and_cached_inactive_ones_refused() {
    let p = protected(|b| {
        b.introspection(
            INTROSPECTION_CLIENT.0,
            Some(INTROSPECTION_CLIENT.1.to_owned()),
        )
    })
    .await;
    p.authz.register_opaque(
        "opaque-active",
        json!({
            "active": true, "iss": p.authz.issuer, "aud": p.resource, "sub": "svc-7",
            "client_id": "opaque-client", "scope": "mcp files:read", "exp": now() + 600,
            "tenant": "acme",
        }),
    );
    p.authz.register_opaque(
        "opaque-other-audience",
        json!({"active": true, "aud": "https://other.example.com", "scope": "mcp", "exp": now() + 600}),
    );
    p.authz.register_opaque(
        "opaque-expired",
        json!({"active": true, "aud": p.resource, "scope": "mcp", "exp": now() - 600}),
    );

    let ex = p.call_tool("opaque-active", "whoami").await;
    let who: serde_json::Value =
        serde_json::from_str(ex.result()["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        who,
        json!({"subject": "svc-7", "client_id": "opaque-client", "issuer": p.authz.issuer,
               "scopes": ["mcp", "files:read"], "tenant": "acme"})
    );
    assert_eq!(p.authz.introspections(), 1);
    p.call("opaque-active", "tools/list", json!({})).await;
    assert_eq!(p.authz.introspections(), 1, "the answer is cached");
    // Scopes from introspection are enforced like any others.
    let r = p.send_tool(Some("opaque-active"), "write_file").await;
    assert_eq!(r.status, 403);

    let r = p
        .send(Some("opaque-unknown"), "tools/list", json!({}))
        .await;
    p.assert_invalid_token(&r, "The token is not active", "mcp");
    let r = p
        .send(Some("opaque-other-audience"), "tools/list", json!({}))
        .await;
    p.assert_invalid_token(
        &r,
        "The token's audience does not include this resource",
        "mcp",
    );
    let r = p
        .send(Some("opaque-expired"), "tools/list", json!({}))
        .await;
    p.assert_invalid_token(&r, "The token has expired", "mcp");
    // Refusals are not cached.
    p.send(Some("opaque-unknown"), "tools/list", json!({}))
        .await;
    assert_eq!(p.authz.introspections(), 5);
    // JWTs still go to the JWKS.
    p.call(&p.token("mcp"), "tools/list", json!({})).await;
    assert_eq!(p.authz.introspections(), 5);
}

#[tokio::test]
async fn wrong_introspection_credentials_fail_closed() {
    let p = protected(|b| b.introspection(INTROSPECTION_CLIENT.0, Some("wrong".into()))).await;
    p.authz.register_opaque(
        "opaque-active",
        json!({"active": true, "aud": p.resource, "scope": "mcp", "exp": now() + 600}),
    );
    let r = p.send(Some("opaque-active"), "tools/list", json!({})).await;
    p.assert_invalid_token(&r, "The token could not be verified", "mcp");
}

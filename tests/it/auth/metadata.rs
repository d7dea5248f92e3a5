//! RFC 9728 metadata, served without a token; the layer on a plain axum app.

use axum::Router;
use axum::extract::Request;
use axum::routing::get;
use serde_json::{Value, json};
use stateless_mcp::auth::ResourceServer;
use stateless_mcp::handler::Principal;

use super::protected;

#[tokio::test]
async fn metadata_is_served_without_a_token_at_both_well_known_uris() {
    let p = protected(|b| b.method_scopes("tools/call", ["tools", "offline_access"])).await;
    let http = crate::support::http();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = http.get(format!("{}{path}", p.base)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.headers()["content-type"], "application/json");
        let doc: Value = r.json().await.unwrap();
        assert_eq!(
            doc,
            json!({
                "resource": p.resource,
                "authorization_servers": [p.authz.issuer],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["docs", "files:read", "files:write", "mcp", "prompts:secret", "tools"],
            }),
            "{path}"
        );
    }
    // The challenge points at the path-suffixed document.
    let r = p.send(None, "tools/list", json!({})).await;
    assert!(
        r.challenge
            .unwrap()
            .contains(&format!("resource_metadata=\"{}\"", p.metadata_url()))
    );
    // Unknown paths are still 404, not 401.
    let r = http
        .get(format!("{}/nowhere", p.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn the_layer_protects_any_axum_app_and_never_forwards_the_token() {
    let authz = crate::support::authz::Authz::start().await;
    let rs = ResourceServer::builder("https://api.example.com")
        .issuer(authz.issuer.clone())
        .required_scopes(["api"])
        .build()
        .unwrap();
    let app = Router::new()
        .route(
            "/whoami",
            get(|req: Request| async move {
                let subject = req
                    .extensions()
                    .get::<Principal>()
                    .and_then(|p| p.subject.clone());
                let forwarded = req.headers().contains_key("authorization");
                axum::Json(json!({"subject": subject, "authorization_header": forwarded}))
            }),
        )
        .route_layer(rs.layer())
        .merge(rs.metadata_router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let _srv = crate::support::serve_on(listener, app, "/");
    let http = crate::support::http();

    let r = http.get(format!("{base}/whoami")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["www-authenticate"],
        "Bearer resource_metadata=\"https://api.example.com/.well-known/oauth-protected-resource\", scope=\"api\""
    );
    let token = authz.token("https://api.example.com", "api");
    let r = http
        .get(format!("{base}/whoami"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"subject": "user-42", "authorization_header": false})
    );
    let r = http
        .get(format!("{base}/.well-known/oauth-protected-resource"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<Value>().await.unwrap()["resource"],
        "https://api.example.com"
    );
}

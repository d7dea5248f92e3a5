//! The reference binary's authorization settings: off by default, refused when incomplete,
//! and enforced when complete.

use std::process::Command;

use serde_json::json;

use crate::support::authz::Authz;
use crate::support::process::spawn_server;

#[test]
fn incomplete_settings_stop_the_binary_with_a_clear_error() {
    for args in [
        &["--resource", "https://mcp.example.com/mcp"][..],
        &["--auth-issuer", "https://as.example.com"][..],
        &["--auth-scopes", "mcp"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_stateless-mcp"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("incomplete authorization settings"),
            "{args:?}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_enforces_tokens_when_configured() {
    let authz = Authz::start().await;
    let resource = "http://mcp.test/mcp";
    let issuer = authz.issuer.clone();
    let server = tokio::task::spawn_blocking(move || {
        spawn_server(&[
            "--auth-issuer",
            &issuer,
            "--resource",
            resource,
            "--auth-scopes",
            "mcp",
        ])
    })
    .await
    .unwrap();
    let client = crate::support::Client::new(&server.url);
    let (h, body) = super::request("tools/list", json!({}));
    let r = client.post_raw(&h, body.clone()).await;
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["www-authenticate"],
        "Bearer resource_metadata=\"http://mcp.test/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
    );
    // The refusal is counted, by reason.
    let metrics = crate::support::get(format!("http://localhost:{}/metrics", server.port))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l == "mcp_auth_failures_total{reason=\"missing_token\"} 1"),
        "{metrics}"
    );
    let mut h = h;
    h.push((
        "authorization".into(),
        format!("Bearer {}", authz.token(resource, "mcp")),
    ));
    let ex = client.send(h, body, Some("tools/list")).await;
    assert_eq!(ex.status, 200, "{}", ex.body);
    assert!(!ex.result()["tools"].as_array().unwrap().is_empty());
    let meta = crate::support::get(format!(
        "http://localhost:{}/.well-known/oauth-protected-resource/mcp",
        server.port
    ))
    .await
    .unwrap();
    assert_eq!(meta.status(), 200);
}

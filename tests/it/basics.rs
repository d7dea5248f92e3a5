//! Discover, list, call, read, get and complete against the fixtures server.

use serde_json::{Value, json};

use crate::support::{Client, fixtures_server, start};

#[tokio::test]
async fn discover_advertises_what_is_registered() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let x = c.request("server/discover", json!(1), Value::Null).await;
    assert_eq!(x.status, 200);
    let r = x.result();
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    for cap in ["tools", "resources", "prompts", "completions"] {
        assert!(r["capabilities"].get(cap).is_some(), "{cap} missing: {r}");
    }
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "stateless-mcp"
    );
}

#[tokio::test]
async fn echo_round_trip() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let x = c
        .request(
            "tools/call",
            json!("a"),
            json!({"name": "echo", "arguments": {"text": "hi there"}}),
        )
        .await;
    assert_eq!(x.status, 200);
    assert_eq!(x.response()["id"], "a");
    assert_eq!(
        x.result()["content"],
        json!([{"type": "text", "text": "hi there"}])
    );
}

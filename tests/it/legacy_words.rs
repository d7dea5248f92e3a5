//! A 2025-11-25 client hears only what that revision defines. A legacy session drives every
//! method both revisions share (and the legacy-only ones, and the Skills extension's), over
//! HTTP and over stdio; every reply is checked against the 2025-11-25 schema with the
//! strict pass of the schema support: a member the 2025-11-25 definition does not define
//! (`resultType`, `ttlMs`, `cacheScope`, or any other), `serverInfo` in `_meta`, or a
//! capability `initialize` may not advertise fails it. The strict pass itself is shown to
//! flag each of them.

use serde_json::{Value, json};

use crate::support::legacy::{Deployment, LegacyClient};
use crate::support::schema::{assert_legacy_members, check_legacy_message};
use crate::support::stdio::StdioClient;

/// Every request a legacy session may send with the demo and conformance fixtures: method
/// and params (`initialize` aside).
fn every_method() -> Vec<(&'static str, Value)> {
    vec![
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
        (
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        ),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": 1}}),
        ),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "demo://readme"})),
        ("resources/read", json!({"uri": "demo://greeting/Ada"})),
        (
            "resources/read",
            json!({"uri": "skill://demo-tour/SKILL.md"}),
        ),
        ("resources/subscribe", json!({"uri": "demo://readme"})),
        ("resources/unsubscribe", json!({"uri": "demo://readme"})),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "style", "value": "f"}}),
        ),
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://demo-tour/SKILL.md"})),
    ]
}

/// Members only 2026-07-28 gives results, looked for in the raw text too.
fn assert_no_modern_text(body: &str) {
    for key in [
        "\"resultType\"",
        "\"ttlMs\"",
        "\"cacheScope\"",
        "io.modelcontextprotocol/serverInfo",
    ] {
        assert!(!body.contains(key), "{key} in a 2025-11-25 reply: {body}");
    }
}

#[tokio::test]
async fn every_legacy_reply_over_http_speaks_2025_11_25_only() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let mut c = LegacyClient::new(&srv.url);
    let init = c.initialize(json!({})).await;
    assert_no_modern_text(&init.body);
    assert!(
        init.result()["capabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_none(),
        "the Tasks extension is 2026-07-28's: {}",
        init.body
    );
    for (i, (method, params)) in every_method().into_iter().enumerate() {
        // LegacyClient checks each message with check_legacy_message (strict).
        let x = c.request(json!(i), method, params).await;
        assert_eq!(x.status, 200, "{method}: {}", x.body);
        assert!(x.response().get("result").is_some(), "{method}: {}", x.body);
        assert_no_modern_text(&x.body);
    }
}

#[tokio::test]
async fn every_legacy_reply_over_stdio_speaks_2025_11_25_only() {
    let mut c = StdioClient::spawn(&["--fixtures", "conformance"]).legacy();
    c.send(
        &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "words", "version": "1"}}}),
    )
    .await;
    let (_, init) = c.until_response(&json!("init")).await;
    assert_no_modern_text(&init.to_string());
    assert_eq!(
        init["result"]["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {}})
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    for (i, (method, params)) in every_method().into_iter().enumerate() {
        // Written as a legacy client writes it: no 2026 `_meta`.
        c.send(&json!({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
            .await;
        let (_, reply) = c.until_response(&json!(i)).await;
        assert!(reply.get("result").is_some(), "{method}: {reply}");
        assert_no_modern_text(&reply.to_string());
    }
}

#[test]
fn the_strict_pass_flags_what_2025_11_25_does_not_define() {
    let flagged = |def: &str, result: Value| {
        let def = def.to_owned();
        std::panic::catch_unwind(move || assert_legacy_members(&def, &result)).is_err()
    };
    let tools = json!({"tools": []});
    assert!(!flagged("ListToolsResult", tools));
    for (def, result) in [
        ("ListToolsResult", json!({"tools": [], "ttlMs": 0})),
        (
            "ListToolsResult",
            json!({"tools": [], "cacheScope": "public"}),
        ),
        (
            "CallToolResult",
            json!({"content": [], "resultType": "complete"}),
        ),
        ("ListToolsResult", json!({"tools": [], "somethingElse": 1})),
        (
            "ReadResourceResult",
            json!({"contents": [], "_meta": {"io.modelcontextprotocol/serverInfo": {}}}),
        ),
        (
            "InitializeResult",
            json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"},
                "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}),
        ),
    ] {
        assert!(flagged(def, result.clone()), "{def} {result} passed");
    }
    // And through the checker every legacy test uses, for a result of an unknown method.
    let message = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}});
    assert!(std::panic::catch_unwind(|| check_legacy_message(&message, None)).is_err());
}

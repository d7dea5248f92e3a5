//! What a legacy session hears: progress and log messages on its `tools/call` stream (at
//! the level set with `logging/setLevel`, on whichever replica), and on its GET stream the
//! list changes and subscribed resource updates announced on any replica, until the session
//! is deleted.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::legacy::{Deployment, LegacyClient};

fn methods(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect()
}

#[tokio::test]
async fn tools_call_streams_log_messages_at_the_level_set_on_another_replica() {
    let d = Deployment::new();
    let (a, b) = (d.replica().await, d.replica().await);
    let on_a = LegacyClient::connect(&a.url, json!({})).await;
    let mut on_b = on_a.clone();
    on_b.url = b.url.clone();
    let call = json!({"name": "test_tool_with_logging", "arguments": {}});

    // No level set: no log messages.
    let x = on_a.request(json!(1), "tools/call", call.clone()).await;
    assert!(methods(&x.messages).is_empty(), "{}", x.body);
    assert!(x.result()["content"][0]["text"].is_string());

    on_b.request(json!(2), "logging/setLevel", json!({"level": "warning"}))
        .await;
    let x = on_a.request(json!(3), "tools/call", call.clone()).await;
    assert!(
        methods(&x.messages).is_empty(),
        "info is below warning: {}",
        x.body
    );

    on_b.request(json!(4), "logging/setLevel", json!({"level": "debug"}))
        .await;
    let x = on_a.request(json!(5), "tools/call", call).await;
    assert!(
        x.content_type().starts_with("text/event-stream"),
        "{}",
        x.body
    );
    assert_eq!(methods(&x.messages), ["notifications/message"; 3]);
    assert_eq!(x.messages[0]["params"]["data"], "Tool execution started");
    assert_eq!(x.response()["id"], 5);
}

#[tokio::test]
async fn tools_call_streams_progress() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = LegacyClient::connect(&srv.url, json!({})).await;
    let x = c
        .request(
            json!(1),
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {},
                   "_meta": {"progressToken": "p1"}}),
        )
        .await;
    let progress: Vec<&Value> = x
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{}", x.body);
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "p1")
    );
    assert_eq!(x.result()["content"][0]["text"], "p1");
}

#[tokio::test]
async fn a_get_stream_hears_changes_made_on_any_replica_until_the_session_ends() {
    let d = Deployment::new();
    let (a, b) = (d.replica().await, d.replica().await);
    let on_a = LegacyClient::connect(&a.url, json!({})).await;
    let mut on_b = on_a.clone();
    on_b.url = b.url.clone();
    let mut stream = on_a.open_stream().await;
    assert_eq!(stream.status, 200);
    assert_eq!(
        stream.headers["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let trigger = |name: &str| json!({"name": name, "arguments": {}});

    // A list change announced on B reaches the stream on A.
    on_b.request(json!(1), "tools/call", trigger("test_trigger_tool_change"))
        .await;
    let m = stream.next().await.unwrap();
    assert_eq!(
        m,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );

    // Not subscribed: no update. Subscribed on B: the stream on A hears it.
    on_b.request(
        json!(2),
        "tools/call",
        trigger("test_trigger_resource_update"),
    )
    .await;
    assert!(
        stream
            .next_within(Duration::from_millis(300))
            .await
            .is_none(),
        "no update before subscribing"
    );
    let sub = json!({"uri": "test://watched-resource"});
    on_b.request(json!(3), "resources/subscribe", sub.clone())
        .await;
    on_b.request(
        json!(4),
        "tools/call",
        trigger("test_trigger_resource_update"),
    )
    .await;
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated");
    assert_eq!(m["params"]["uri"], "test://watched-resource");

    on_a.request(json!(5), "resources/unsubscribe", sub).await;
    on_b.request(
        json!(6),
        "tools/call",
        trigger("test_trigger_resource_update"),
    )
    .await;
    on_b.request(
        json!(7),
        "tools/call",
        trigger("test_trigger_prompt_change"),
    )
    .await;
    let m = stream.next().await.unwrap();
    assert_eq!(
        m["method"], "notifications/prompts/list_changed",
        "the update after unsubscribing was not sent"
    );

    // DELETE on B ends the stream on A.
    assert_eq!(on_b.delete().await, 204);
    assert!(
        stream.next().await.is_none(),
        "the stream ends with the session"
    );
}

#[tokio::test]
async fn get_streams_are_refused_without_a_live_session_or_event_stream() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = LegacyClient::connect(&srv.url, json!({})).await;
    let mut dead = c.clone();
    dead.session = Some("v1.k1.nope".into());
    assert_eq!(dead.open_stream().await.status, 404);
    let json_only = c
        .send_with(
            "GET",
            vec![
                ("accept".into(), "application/json".into()),
                ("mcp-session-id".into(), c.session.clone().unwrap()),
            ],
            String::new(),
            None,
        )
        .await;
    assert_eq!(json_only.status, 406);
    let mut none = c.clone();
    none.session = None;
    // It says it speaks 2025-11-25 (MCP-Protocol-Version): that revision's 400.
    assert_eq!(none.open_stream().await.status, 400);
}

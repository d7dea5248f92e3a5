//! The same multi-round-trip handlers for a legacy client: `InputRequired` becomes
//! `elicitation/create`, `sampling/createMessage` or `roots/list` requests on the
//! `tools/call` stream; the answer, POSTed to any replica, resumes the call on the replica
//! holding the stream. Requests the session's capabilities do not allow are `-32021`; an
//! unanswered one times out; answers from another session, late or unknown ones are
//! acknowledged and dropped.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::legacy::{Deployment, LegacyClient, LegacyStream};
use crate::support::start;

const ALL: &str = r#"{"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}}"#;

fn caps() -> Value {
    serde_json::from_str(ALL).unwrap()
}

/// The next message, which must be a server-to-client request for `method`.
async fn request_for(stream: &mut LegacyStream, method: &str) -> Value {
    let m = stream.next().await.expect("a server-to-client request");
    assert_eq!(m["method"], method, "{m}");
    assert!(m["id"].is_string(), "{m}");
    m
}

#[tokio::test]
async fn an_elicitation_answered_on_another_replica_resumes_the_call() {
    let d = Deployment::new();
    let (a, b) = (d.replica().await, d.replica().await);
    let on_a = LegacyClient::connect(&a.url, caps()).await;
    let mut on_b = on_a.clone();
    on_b.url = b.url.clone();
    let mut call = on_a
        .stream_request(
            json!(7),
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {"message": "Who are you?"}}),
        )
        .await;
    assert_eq!(call.status, 200);
    let ask = request_for(&mut call, "elicitation/create").await;
    assert_eq!(ask["params"]["message"], "Who are you?");
    assert_eq!(
        ask["params"]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    let answer = json!({"action": "accept", "content": {"username": "u", "email": "e@x"}});
    assert_eq!(on_b.answer(&ask["id"], answer.clone()).await, 202);
    let done = call.next().await.unwrap();
    assert_eq!(done["id"], 7);
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("accept") && text.contains("e@x"), "{text}");
    // A late answer (the call is over) is acknowledged and dropped.
    assert_eq!(on_b.answer(&ask["id"], answer.clone()).await, 202);
    assert_eq!(on_a.answer(&json!("nobody.1.x"), answer).await, 202);
}

#[tokio::test]
async fn sampling_and_roots_round_trip() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = LegacyClient::connect(&srv.url, caps()).await;
    let mut call = c
        .stream_request(
            json!(1),
            "tools/call",
            json!({"name": "test_sampling", "arguments": {"prompt": "Say hi"}}),
        )
        .await;
    let ask = request_for(&mut call, "sampling/createMessage").await;
    assert_eq!(ask["params"]["maxTokens"], 100);
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], "Say hi");
    let reply = json!({"role": "assistant", "content": {"type": "text", "text": "hi!"},
                       "model": "m", "stopReason": "endTurn"});
    assert_eq!(c.answer(&ask["id"], reply).await, 202);
    let done = call.next().await.unwrap();
    assert_eq!(done["result"]["content"][0]["text"], "LLM response: hi!");

    let mut call = c
        .stream_request(
            json!(2),
            "tools/call",
            json!({"name": "test_input_required_result_list_roots", "arguments": {}}),
        )
        .await;
    let ask = request_for(&mut call, "roots/list").await;
    let roots = json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]});
    assert_eq!(c.answer(&ask["id"], roots).await, 202);
    let done = call.next().await.unwrap();
    assert_eq!(
        done["result"]["content"][0]["text"],
        "The client has 2 root(s)"
    );
}

#[tokio::test]
async fn a_request_the_session_cannot_take_is_32021() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = LegacyClient::connect(&srv.url, json!({"sampling": {}})).await;
    let x = c
        .request(
            json!(1),
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {"message": "m"}}),
        )
        .await;
    assert_eq!(x.error_code(), -32021, "{}", x.body);
    assert!(x.response()["error"]["data"]["requiredCapabilities"]["elicitation"].is_object());
}

#[tokio::test]
async fn answers_from_another_session_are_dropped_and_unanswered_calls_time_out() {
    let d = Deployment::new();
    let srv = start(
        d.builder()
            .legacy_input_timeout(Duration::from_secs(2))
            .build()
            .unwrap(),
    )
    .await;
    let c = LegacyClient::connect(&srv.url, caps()).await;
    let intruder = LegacyClient::connect(&srv.url, caps()).await;
    let mut call = c
        .stream_request(
            json!(1),
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {"message": "m"}}),
        )
        .await;
    let ask = request_for(&mut call, "elicitation/create").await;
    let forged = json!({"action": "accept", "content": {"username": "x", "email": "y"}});
    assert_eq!(intruder.answer(&ask["id"], forged).await, 202);
    let done = call.next().await.unwrap();
    let error = &done["error"];
    assert_eq!(error["code"], -32603, "{done}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("did not answer elicitation/create within 2 s"),
        "{message}"
    );
}

#[tokio::test]
async fn a_client_that_takes_json_only_is_told_why_it_gets_no_request() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = LegacyClient::connect(&srv.url, caps()).await;
    let mut headers = c.headers();
    headers.retain(|(k, _)| k != "accept");
    headers.push(("accept".into(), "application/json".into()));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "m"}}});
    let x = c.send(headers, body.to_string(), Some("tools/call")).await;
    assert_eq!(x.error_code(), -32602, "{}", x.body);
    assert!(x.body.contains("text/event-stream"), "{}", x.body);
}

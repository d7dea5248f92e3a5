//! 2025-11-25 sessions over stdio (`stateless-mcp --transport stdio`): the real binary as a
//! subprocess, every message it writes checked against the 2025-11-25 schema. A handler's
//! `InputRequired` becomes `elicitation/create`, `sampling/createMessage` and `roots/list`
//! requests on stdout, answered on stdin (in any order; unknown, late and duplicate answers
//! dropped; a cancelled call takes its pending request with it; an unanswered one times
//! out); the session's notifications follow on stdout (`resources/updated` for subscribed
//! URIs, `list_changed`); `logging/setLevel` sets the level of a call's log messages; and
//! legacy requests are observed like 2026 ones.

use serde_json::{Value, json};

use crate::support::stdio::StdioClient;

const ALL: &str = r#"{"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}}"#;

/// A legacy session over the binary's pipes (`--fixtures conformance` and `args`), with
/// the client capabilities `caps`, initialized.
async fn session(caps: Value, args: &[&str]) -> StdioClient {
    let mut all = vec!["--fixtures", "conformance"];
    all.extend_from_slice(args);
    let mut c = StdioClient::spawn(&all).legacy();
    initialize(&mut c, json!("init"), caps).await;
    c
}

async fn initialize(c: &mut StdioClient, id: Value, caps: Value) {
    c.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": caps,
        "clientInfo": {"name": "stdio-legacy-it", "version": "1.0.0"}}}),
    )
    .await;
    let (before, init) = c.until_response(&id).await;
    assert!(
        before.is_empty(),
        "nothing before the initialize answer: {before:?}"
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

fn caps() -> Value {
    serde_json::from_str(ALL).unwrap()
}

async fn call(c: &mut StdioClient, id: Value, name: &str, arguments: Value) {
    c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}}))
        .await;
}

async fn answer(c: &mut StdioClient, id: &Value, result: Value) {
    c.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
        .await;
}

/// Calls `test_elicitation` with `message`: the `elicitation/create` request it sends.
async fn elicit(c: &mut StdioClient, id: Value, message: &str) -> Value {
    call(c, id, "test_elicitation", json!({"message": message})).await;
    let ask = request_for(c, "elicitation/create").await;
    assert_eq!(ask["params"]["message"], message);
    ask
}

/// The next message, which must be a server-to-client request for `method`.
async fn request_for(c: &mut StdioClient, method: &str) -> Value {
    let m = c.next().await;
    assert_eq!(m["method"], method, "{m}");
    assert!(m["id"].is_string(), "{m}");
    m
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {response}"))
}

/// Closes stdin and checks that nothing more comes and the process exits 0.
async fn finish(mut c: StdioClient) -> StdioClient {
    c.close_stdin().await;
    let rest = c.expect_end().await;
    assert!(rest.is_empty(), "nothing after the end of stdin: {rest:?}");
    assert!(c.exit_status().await.success());
    c
}

fn logged(c: &StdioClient, text: &str) -> usize {
    c.stderr_lines().iter().filter(|l| l.contains(text)).count()
}

#[tokio::test]
async fn elicitation_sampling_and_roots_are_asked_on_stdout_and_answered_on_stdin() {
    let mut c = session(caps(), &[]).await;
    let ask = elicit(&mut c, json!(1), "Who are you?").await;
    assert_eq!(
        ask["params"]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    answer(
        &mut c,
        &ask["id"],
        json!({"action": "accept", "content": {"username": "u", "email": "e@x"}}),
    )
    .await;
    let done = c.next().await;
    assert_eq!(done["id"], 1, "{done}");
    assert!(
        text(&done).contains("accept") && text(&done).contains("e@x"),
        "{done}"
    );

    call(
        &mut c,
        json!(2),
        "test_sampling",
        json!({"prompt": "Say hi"}),
    )
    .await;
    let ask = request_for(&mut c, "sampling/createMessage").await;
    assert_eq!(ask["params"]["maxTokens"], 100);
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], "Say hi");
    answer(
        &mut c,
        &ask["id"],
        json!({"role": "assistant", "content": {"type": "text", "text": "hi!"},
               "model": "m", "stopReason": "endTurn"}),
    )
    .await;
    let done = c.next().await;
    assert_eq!(done["id"], 2, "{done}");
    assert_eq!(text(&done), "LLM response: hi!");

    call(
        &mut c,
        json!(3),
        "test_input_required_result_list_roots",
        json!({}),
    )
    .await;
    let ask = request_for(&mut c, "roots/list").await;
    answer(
        &mut c,
        &ask["id"],
        json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}),
    )
    .await;
    let done = c.next().await;
    assert_eq!(done["id"], 3, "{done}");
    assert_eq!(text(&done), "The client has 2 root(s)");

    // The client declines with a JSON-RPC error: the call fails with its message.
    call(&mut c, json!(4), "test_sampling", json!({"prompt": "No"})).await;
    let ask = request_for(&mut c, "sampling/createMessage").await;
    c.send(&json!({"jsonrpc": "2.0", "id": ask["id"],
        "error": {"code": -1, "message": "user declined"}}))
        .await;
    let done = c.next().await;
    assert_eq!(done["id"], 4, "{done}");
    let message = done["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("user declined"), "{done}");
    finish(c).await;
}

#[tokio::test]
async fn answers_in_any_order_resume_their_calls_and_stray_answers_are_dropped() {
    let mut c = session(caps(), &[]).await;
    // One round of three requests; answered last first.
    call(
        &mut c,
        json!("multi"),
        "test_input_required_result_multiple_inputs",
        json!({}),
    )
    .await;
    let mut asked = Vec::new();
    for _ in 0..3 {
        let m = c.next().await;
        assert!(m["id"].is_string(), "a server-to-client request: {m}");
        asked.push(m);
    }
    let methods: Vec<&str> = asked.iter().filter_map(|m| m["method"].as_str()).collect();
    for wanted in ["elicitation/create", "sampling/createMessage", "roots/list"] {
        assert!(methods.contains(&wanted), "{methods:?}");
    }
    // Stray answers first: an id no request has, a number, and one without an id.
    answer(&mut c, &json!("nobody.1.x"), json!({})).await;
    answer(&mut c, &json!(99), json!({})).await;
    c.send(&json!({"jsonrpc": "2.0", "result": {}})).await;
    for m in asked.iter().rev() {
        let result = match m["method"].as_str().unwrap() {
            "elicitation/create" => json!({"action": "accept", "content": {"name": "Ada"}}),
            "sampling/createMessage" => json!({"role": "assistant",
                "content": {"type": "text", "text": "Hello"}, "model": "m"}),
            _ => json!({"roots": [{"uri": "file:///r"}]}),
        };
        answer(&mut c, &m["id"], result).await;
    }
    let done = c.next().await;
    assert_eq!(done["id"], "multi", "{done}");
    assert_eq!(text(&done), "Ada: greeting received, 1 root(s)");
    // The same answer again: late, dropped.
    answer(&mut c, &asked[2]["id"], json!({"roots": []})).await;

    // Two calls waiting at once, answered in the other order.
    let first = elicit(&mut c, json!(10), "first").await;
    let second = elicit(&mut c, json!(11), "second").await;
    assert_ne!(first["id"], second["id"]);
    let form = |who: &str| json!({"action": "accept", "content": {"username": who, "email": "e"}});
    answer(&mut c, &second["id"], form("two")).await;
    let done = c.next().await;
    assert_eq!(done["id"], 11, "{done}");
    assert!(text(&done).contains("two"), "{done}");
    answer(&mut c, &first["id"], form("one")).await;
    let done = c.next().await;
    assert_eq!(done["id"], 10, "{done}");
    assert!(text(&done).contains("one"), "{done}");

    // The session is fine.
    c.send(&json!({"jsonrpc": "2.0", "id": 12, "method": "ping"}))
        .await;
    assert_eq!(c.next().await["result"], json!({}));
    let c = finish(c).await;
    let unknown = "dropped a late or unknown answer to a server-to-client request";
    assert_eq!(logged(&c, unknown), 2, "nobody.1.x and the duplicate");
    assert_eq!(
        logged(
            &c,
            "dropped an answer to an unknown server-to-client request"
        ),
        1,
        "the numeric id"
    );
    assert_eq!(logged(&c, "dropped an answer without a usable id"), 1);
}

#[tokio::test]
async fn a_cancelled_call_takes_its_pending_request_with_it() {
    let mut c = session(caps(), &[]).await;
    let ask = elicit(&mut c, json!(1), "m").await;
    c.cancel(json!(1)).await;
    // The answer comes after the cancellation: its request is gone.
    answer(
        &mut c,
        &ask["id"],
        json!({"action": "accept", "content": {"username": "u", "email": "e"}}),
    )
    .await;
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    let pong = c.next().await;
    assert_eq!(
        (pong["id"].clone(), pong["result"].clone()),
        (json!(2), json!({}))
    );
    // No answer to the cancelled call, ever: `finish` fails on anything after the pong.
    let c = finish(c).await;
    // The cancellation stops the call when its task next runs; an answer read before that
    // still reaches the waiting request (and goes nowhere), so the drop is logged at most once.
    assert!(
        logged(
            &c,
            "dropped a late or unknown answer to a server-to-client request"
        ) <= 1
    );
}

#[tokio::test]
async fn an_unanswered_request_fails_the_call_and_a_capability_the_client_lacks_is_32021() {
    let mut c = session(
        json!({"elicitation": {}}),
        &["--legacy-input-timeout-secs", "1"],
    )
    .await;
    elicit(&mut c, json!(1), "m").await;
    let done = c.next().await;
    assert_eq!(done["id"], 1, "{done}");
    assert_eq!(done["error"]["code"], -32603, "{done}");
    let message = done["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("did not answer elicitation/create within 1 s"),
        "{message}"
    );
    // No sampling capability: nothing is sent, the call is -32021.
    call(&mut c, json!(2), "test_sampling", json!({"prompt": "p"})).await;
    let done = c.next().await;
    assert_eq!(done["id"], 2, "{done}");
    assert_eq!(done["error"]["code"], -32021, "{done}");
    assert!(done["error"]["data"]["requiredCapabilities"]["sampling"].is_object());
    finish(c).await;
}

/// Messages up to the response to `id` and the notification `method`, in either order:
/// the response, the notification, and the other messages seen meanwhile.
async fn response_and(c: &mut StdioClient, id: &Value, method: &str) -> (Value, Value, Vec<Value>) {
    let (mut response, mut notification, mut other) = (None, None, Vec::new());
    while response.is_none() || notification.is_none() {
        let m = c.next().await;
        if m.get("id") == Some(id) && m.get("method").is_none() {
            response = Some(m);
        } else if m["method"] == method && notification.is_none() {
            notification = Some(m);
        } else {
            other.push(m);
        }
    }
    (response.unwrap(), notification.unwrap(), other)
}

#[tokio::test]
async fn subscribed_resource_updates_and_list_changes_follow_on_stdout() {
    let mut c = session(json!({}), &[]).await;
    let uri = "test://watched-resource";
    c.send(
        &json!({"jsonrpc": "2.0", "id": "sub", "method": "resources/subscribe",
        "params": {"uri": uri}}),
    )
    .await;
    assert_eq!(c.next().await["result"], json!({}));
    call(&mut c, json!(1), "test_trigger_resource_update", json!({})).await;
    let (done, updated, other) =
        response_and(&mut c, &json!(1), "notifications/resources/updated").await;
    assert_eq!(text(&done), "notified");
    assert_eq!(updated["params"]["uri"], uri, "{updated}");
    assert!(other.is_empty(), "{other:?}");

    call(&mut c, json!(2), "test_trigger_tool_change", json!({})).await;
    let (_, changed, other) =
        response_and(&mut c, &json!(2), "notifications/tools/list_changed").await;
    assert_eq!(
        changed,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert!(other.is_empty(), "{other:?}");
    call(&mut c, json!(3), "test_trigger_prompt_change", json!({})).await;
    response_and(&mut c, &json!(3), "notifications/prompts/list_changed").await;

    // Unsubscribed: the next update is not sent (it would come before the list change
    // announced after it).
    c.send(
        &json!({"jsonrpc": "2.0", "id": "unsub", "method": "resources/unsubscribe",
        "params": {"uri": uri}}),
    )
    .await;
    assert_eq!(c.next().await["result"], json!({}));
    call(&mut c, json!(4), "test_trigger_resource_update", json!({})).await;
    assert_eq!(text(&c.next().await), "notified");
    call(&mut c, json!(5), "test_trigger_tool_change", json!({})).await;
    let (_, _, other) = response_and(&mut c, &json!(5), "notifications/tools/list_changed").await;
    assert!(
        other.is_empty(),
        "no resources/updated after unsubscribe: {other:?}"
    );
    finish(c).await;
}

#[tokio::test]
async fn a_new_initialize_replaces_the_session_and_its_notifications() {
    let mut c = session(json!({}), &[]).await;
    initialize(&mut c, json!("again"), json!({})).await;
    call(&mut c, json!(1), "test_trigger_tool_change", json!({})).await;
    let (_, _, other) = response_and(&mut c, &json!(1), "notifications/tools/list_changed").await;
    assert!(other.is_empty(), "one stream, one notification: {other:?}");
    // Anything more would arrive before the answer to this ping.
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(c.next().await["id"], 2);
    let c = finish(c).await;
    assert_eq!(
        logged(
            &c,
            "a new initialize replaced this process's legacy session"
        ),
        1
    );
}

#[tokio::test]
async fn set_level_decides_the_log_messages_a_call_writes() {
    let mut c = session(json!({}), &[]).await;
    for (id, level, expected) in [(1, "info", 3), (3, "error", 0)] {
        c.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel",
            "params": {"level": level}}),
        )
        .await;
        assert_eq!(c.next().await["result"], json!({}));
        call(&mut c, json!(id + 1), "test_tool_with_logging", json!({})).await;
        let (before, done) = c.until_response(&json!(id + 1)).await;
        assert_eq!(text(&done), "Tool with logging executed successfully");
        let logs: Vec<&Value> = before
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .collect();
        assert_eq!(logs.len(), expected, "at level {level}: {before:?}");
        if let Some(first) = logs.first() {
            assert_eq!(first["params"]["level"], "info");
            assert_eq!(first["params"]["data"], "Tool execution started");
        }
    }
    finish(c).await;
}

#[tokio::test]
async fn legacy_requests_over_stdio_are_observed_like_2026_ones() {
    let mut c = session(
        caps(),
        &["--log-format", "json", "--log", "stateless_mcp=debug"],
    )
    .await;
    call(&mut c, json!("seen"), "echo", json!({"text": "observed"})).await;
    assert_eq!(text(&c.next().await), "observed");
    c.send(&json!({"jsonrpc": "2.0", "id": "pinged", "method": "ping"}))
        .await;
    c.next().await;
    call(&mut c, json!("bad"), "no_such_tool", json!({})).await;
    c.next().await;
    let c = finish(c).await;
    let finished = |id: &str| c.request_finished(id);
    let seen = finished("seen");
    assert_eq!(seen["span"]["name"], "mcp.request");
    assert_eq!(seen["span"]["mcp.method.name"], "tools/call");
    assert_eq!(seen["span"]["gen_ai.tool.name"], "echo");
    assert_eq!(seen["span"]["mcp.protocol.version"], "2025-11-25");
    assert_eq!(seen["span"]["mcp.client.name"], "stdio-legacy-it");
    assert_eq!(seen["fields"]["outcome"], "ok");
    let ping = finished("pinged");
    assert_eq!(ping["span"]["mcp.method.name"], "ping");
    assert_eq!(ping["fields"]["outcome"], "ok");
    assert_eq!(finished("init")["span"]["mcp.method.name"], "initialize");
    assert_ne!(finished("bad")["fields"]["outcome"], "ok");
}

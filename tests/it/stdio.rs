//! The stdio transport (`stateless-mcp --transport stdio`): the real binary as a subprocess,
//! one JSON-RPC message per line on its stdin and stdout, every message checked against the
//! schema. Concurrency and out-of-order answers, interleaved notifications, bad input,
//! cancellation, listen streams, multi-round-trip requests, and how the process ends.

use std::time::Duration;

use serde_json::{Value, json};
use stateless_mcp::transport::stdio::Stdio;
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
use tokio::sync::mpsc;

use crate::support::stdio::StdioClient;

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {response}"))
}

#[tokio::test]
async fn requests_run_concurrently_and_are_answered_as_they_finish() {
    let mut c = StdioClient::spawn(&[]);
    c.request(
        json!("slow"),
        "tools/call",
        call("sleep", json!({"ms": 700})),
    )
    .await;
    c.request(
        json!(2),
        "tools/call",
        call("echo", json!({"text": "fast"})),
    )
    .await;
    c.request(json!(3), "server/discover", json!({})).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let m = c.next().await;
        ids.push(m["id"].clone());
        match m["id"].as_i64() {
            Some(2) => assert_eq!(text(&m), "fast"),
            Some(3) => assert!(m["result"]["supportedVersions"].is_array(), "{m}"),
            _ => assert_eq!(text(&m), "slept 700 ms"),
        }
    }
    assert_eq!(
        ids.last(),
        Some(&json!("slow")),
        "answered as finished: {ids:?}"
    );
    c.close_stdin().await;
    assert!(c.expect_end().await.is_empty());
    assert!(c.exit_status().await.success());
}

#[tokio::test]
async fn progress_and_log_messages_are_interleaved_before_the_reply() {
    let mut c = StdioClient::spawn(&["--fixtures", "conformance"]);
    c.request(
        json!(1),
        "tools/call",
        json!({"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": "p1"}}),
    )
    .await;
    c.request(
        json!(2),
        "tools/call",
        json!({"name": "test_logging_tool", "arguments": {},
               "_meta": {"io.modelcontextprotocol/logLevel": "debug"}}),
    )
    .await;
    let mut progress = Vec::new();
    let mut logs = Vec::new();
    let mut done = Vec::new();
    while done.len() < 2 {
        let m = c.next().await;
        match m["method"].as_str() {
            Some("notifications/progress") => {
                assert!(!done.contains(&1), "progress after its reply: {m}");
                assert_eq!(m["params"]["progressToken"], "p1");
                progress.push(m["params"]["progress"].as_f64().unwrap());
            }
            Some("notifications/message") => {
                assert!(!done.contains(&2), "log message after its reply: {m}");
                logs.push(m["params"]["data"].clone());
            }
            Some(other) => panic!("unexpected notification {other}: {m}"),
            None => done.push(m["id"].as_i64().unwrap()),
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(logs, [json!("logging tool called")]);
}

#[tokio::test]
async fn bad_input_gets_an_error_and_the_session_goes_on() {
    let mut c = StdioClient::spawn(&["--body-limit", "1024"]);
    c.send_raw(b"this is not json\n").await;
    let m = c.next().await;
    assert_eq!(m["error"]["code"], -32700, "{m}");
    assert!(m.get("id").is_none(), "{m}");

    c.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}]\n")
        .await;
    assert_eq!(c.next().await["error"]["code"], -32600);

    // A line over the limit, written in pieces: one error, the rest of the line dropped.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        "x".repeat(200_000)
    );
    for piece in big.as_bytes().chunks(7000) {
        c.send_raw(piece).await;
    }
    c.send_raw(b"\n").await;
    let m = c.next().await;
    assert_eq!(m["error"]["code"], -32600, "{m}");
    assert!(m.get("id").is_none(), "{m}");
    assert!(
        m["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1024 bytes"),
        "{m}"
    );

    // A response from the client gets no answer; a request without _meta gets -32602.
    c.send(&json!({"jsonrpc": "2.0", "id": 77, "result": {}}))
        .await;
    c.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}))
        .await;
    let m = c.next().await;
    assert_eq!(
        (m["id"].clone(), m["error"]["code"].clone()),
        (json!(6), json!(-32602)),
        "{m}"
    );

    // CRLF line endings and blank lines are fine.
    let ok = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": crate::support::with_meta(call("echo", json!({"text": "still here"})))});
    c.send_raw(format!("\r\n\n{ok}\r\n").as_bytes()).await;
    let m = c.next().await;
    assert_eq!(m["id"], 7);
    assert_eq!(text(&m), "still here");
    c.close_stdin().await;
    assert!(c.expect_end().await.is_empty());
    assert!(c.exit_status().await.success());
}

#[tokio::test]
async fn a_cancelled_request_gets_no_answer() {
    let mut c = StdioClient::spawn(&["--shutdown-timeout-secs", "600"]);
    c.request(
        json!(1),
        "tools/call",
        call("sleep", json!({"ms": 600_000})),
    )
    .await;
    c.request(json!(2), "tools/call", call("sleep", json!({"ms": 100})))
        .await;
    c.cancel(json!(1)).await;
    // Unknown ids are ignored.
    c.cancel(json!("nobody")).await;
    c.request(
        json!(3),
        "tools/call",
        call("echo", json!({"text": "after"})),
    )
    .await;
    let (before, m) = c.until_response(&json!(3)).await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(text(&m), "after");
    assert_eq!(c.next().await["id"], 2);
    // Nothing is left in flight: the end of stdin ends the process without the 600 s drain.
    c.close_stdin().await;
    assert_eq!(c.expect_end().await, Vec::<Value>::new());
    assert!(c.exit_status().await.success());
}

#[tokio::test]
async fn the_end_of_stdin_lets_requests_in_flight_finish_then_exits_0() {
    let mut c = StdioClient::spawn(&[]);
    c.request(json!(1), "tools/call", call("sleep", json!({"ms": 500})))
        .await;
    c.request(json!(2), "tools/call", call("count", json!({"steps": 2})))
        .await;
    c.close_stdin().await;
    let rest = c.expect_end().await;
    let ids: Vec<&Value> = rest.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(2), &json!(1)], "{rest:?}");
    assert!(c.exit_status().await.success());
    assert!(c.stderr_lines().iter().any(|l| l.contains("stdin closed")));
}

#[tokio::test]
async fn sigterm_finishes_requests_closes_listen_streams_and_exits_0() {
    let mut c = StdioClient::spawn(&["--fixtures", "conformance"]);
    c.request(
        json!("l"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .await;
    assert_eq!(
        c.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    c.request(json!(1), "tools/call", call("sleep", json!({"ms": 500})))
        .await;
    // The request is read before the signal.
    c.request(json!(2), "tools/call", call("echo", json!({"text": "x"})))
        .await;
    assert_eq!(c.next().await["id"], 2);
    c.signal("TERM");
    let rest = c.expect_end().await;
    let ids: Vec<&Value> = rest.iter().map(|m| &m["id"]).collect();
    assert!(
        ids.contains(&&json!(1)) && ids.contains(&&json!("l")),
        "{rest:?}"
    );
    let closed = rest.iter().find(|m| m["id"] == "l").unwrap();
    assert_eq!(
        closed["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "l"
    );
    assert!(c.exit_status().await.success());
}

#[tokio::test]
async fn a_closed_stdout_ends_the_process_quietly() {
    let mut c = StdioClient::spawn(&[]);
    c.request(json!(1), "tools/call", call("echo", json!({"text": "x"})))
        .await;
    assert_eq!(c.next().await["id"], 1);
    c.close_stdout();
    for id in 2..200 {
        c.request(json!(id), "tools/call", call("count", json!({"steps": 5})))
            .await;
        if c.child().try_wait().unwrap().is_some() {
            break;
        }
    }
    let status = c.exit_status().await;
    assert!(status.success(), "{status:?}");
    let stderr = c.stderr_lines();
    assert!(
        !stderr
            .iter()
            .any(|l| l.contains("panicked") || l.contains("ERROR")),
        "{stderr:#?}"
    );
    assert!(
        stderr.iter().any(|l| l.contains("stdout closed")),
        "{stderr:#?}"
    );
}

/// The next `n` messages, each as `method subscriptionId` or `reply id`, sorted.
async fn summaries(c: &mut StdioClient, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    while seen.len() < n {
        let m = c.next().await;
        seen.push(match m["method"].as_str() {
            Some(method) => format!(
                "{method} {}",
                m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
            ),
            None => format!("reply {}", m["id"]),
        });
    }
    seen.sort();
    seen
}

#[tokio::test]
async fn listen_streams_over_stdio_are_acknowledged_tagged_and_cancelled() {
    let mut c = StdioClient::spawn(&["--fixtures", "conformance"]);
    c.request(
        json!("tools"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .await;
    c.request(
        json!("more"),
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true,
                                 "resourceSubscriptions": ["test://watched-resource"]}}),
    )
    .await;
    let mut acks = Vec::new();
    for _ in 0..2 {
        let m = c.next().await;
        assert_eq!(
            m["method"], "notifications/subscriptions/acknowledged",
            "{m}"
        );
        acks.push(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone());
    }
    acks.sort_by_key(ToString::to_string);
    assert_eq!(acks, [json!("more"), json!("tools")]);

    c.request(
        json!(1),
        "tools/call",
        call("test_trigger_tool_change", json!({})),
    )
    .await;
    c.request(
        json!(2),
        "tools/call",
        call("test_trigger_resource_update", json!({})),
    )
    .await;
    assert_eq!(
        summaries(&mut c, 4).await,
        [
            r#"notifications/resources/updated "more""#,
            r#"notifications/tools/list_changed "tools""#,
            "reply 1",
            "reply 2",
        ]
    );

    // Cancelled: the stream ends without a result and gets nothing more.
    c.cancel(json!("tools")).await;
    c.request(
        json!(3),
        "tools/call",
        call("test_trigger_tool_change", json!({})),
    )
    .await;
    c.request(
        json!(4),
        "tools/call",
        call("test_trigger_prompt_change", json!({})),
    )
    .await;
    assert_eq!(
        summaries(&mut c, 3).await,
        [
            r#"notifications/prompts/list_changed "more""#,
            "reply 3",
            "reply 4"
        ]
    );
    // At the end of stdin the open stream gets its graceful result.
    c.close_stdin().await;
    let rest = c.expect_end().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], "more");
    assert_eq!(rest[0]["result"]["resultType"], "complete");
    assert!(c.exit_status().await.success());
}

#[tokio::test]
async fn a_multi_round_trip_request_completes_over_stdio() {
    let mut c = StdioClient::spawn(&["--fixtures", "conformance"]);
    let caps = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}});
    let mut params = call("test_input_required_result_elicitation", json!({}));
    params["_meta"] = caps.clone();
    c.request(json!(1), "tools/call", params.clone()).await;
    let first = c.next().await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(
        first["result"]["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    params["inputResponses"] =
        json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
    c.request(json!(2), "tools/call", params).await;
    let second = c.next().await;
    assert_eq!(second["id"], 2);
    assert_eq!(text(&second), "Hello, Ada!");
}

#[tokio::test]
async fn stdout_carries_only_json_rpc_even_with_debug_logs() {
    let mut c = StdioClient::spawn(&["--log", "debug"]);
    for id in 0..20 {
        c.request(
            json!(id),
            "tools/call",
            call("echo", json!({"text": id.to_string()})),
        )
        .await;
    }
    c.request(json!("d"), "server/discover", json!({})).await;
    c.close_stdin().await;
    // `expect_end` fails on any line that is not a JSON-RPC message valid for the schema.
    let all = c.expect_end().await;
    assert_eq!(all.len(), 21);
    assert!(c.exit_status().await.success());
    assert!(!c.stderr_lines().is_empty(), "the logs went to stderr");
}

/// Sends on drop: the handler's future was dropped (cancelled).
struct OnDrop(mpsc::UnboundedSender<&'static str>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

#[tokio::test]
async fn cancellation_drops_the_running_handler() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = Server::builder()
        .tool(
            ToolDef::new("hang").raw_handler(move |_ctx: RequestContext, _args: Value| {
                let guard = OnDrop(tx.clone());
                let started = tx.clone();
                async move {
                    let _guard = guard;
                    let _ = started.send("started");
                    std::future::pending::<()>().await;
                    Ok::<_, HandlerError>("never")
                }
            }),
        )
        .build()
        .unwrap();
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let (client_read, client_write) = tokio::io::split(client_end);
    let session = tokio::spawn(Stdio::new(server).serve_io(server_read, server_write));
    let mut c = StdioClient::over(client_read, client_write);
    c.request(json!(1), "tools/call", call("hang", json!({})))
        .await;
    assert_eq!(rx.recv().await, Some("started"));
    c.cancel(json!(1)).await;
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap(),
        Some("dropped")
    );
    c.close_stdin().await;
    assert!(
        c.expect_end().await.is_empty(),
        "a cancelled request gets no answer"
    );
    session.await.unwrap().unwrap();
}

#[test]
fn http_only_settings_are_refused_on_stdio() {
    let (status, text) = crate::support::process::run_server(
        &[
            "--auth-issuer",
            "https://issuer.test",
            "--resource",
            "https://mcp.test/mcp",
        ],
        &[("MCP_TRANSPORT", "stdio")],
    );
    assert!(!status.success(), "{text}");
    assert!(text.contains("over stdio"), "{text}");
}

#[tokio::test]
async fn stdio_requests_are_observed_like_http_ones() {
    let mut c = StdioClient::spawn(&["--log-format", "json", "--log", "stateless_mcp=debug"]);
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let params = json!({"name": "echo", "arguments": {"text": "observed"},
        "_meta": {"traceparent": format!("00-{trace}-00f067aa0ba902b7-01")}});
    c.request(json!("seen"), "tools/call", params).await;
    c.request(json!("bad"), "tools/call", call("no_such_tool", json!({})))
        .await;
    c.close_stdin().await;
    assert_eq!(c.expect_end().await.len(), 2);
    assert!(c.exit_status().await.success());
    let finished = |id: &str| c.request_finished(id);
    let seen = finished("seen");
    assert_eq!(seen["span"]["name"], "mcp.request");
    assert_eq!(seen["span"]["mcp.method.name"], "tools/call");
    assert_eq!(seen["span"]["gen_ai.tool.name"], "echo");
    assert_eq!(seen["span"]["trace_id"], trace);
    assert_eq!(seen["fields"]["outcome"], "ok");
    assert_eq!(finished("bad")["fields"]["outcome"], "invalid_params");
}

#[tokio::test]
async fn a_2025_11_25_client_initializes_and_the_process_is_its_session() {
    let mut c = StdioClient::spawn(&[]).legacy();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy-it", "version": "1.0.0"}}}),
    )
    .await;
    let init = c.next().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "stateless-mcp");
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    // No _meta and no session header: the session is the process.
    c.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let list = c.next().await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{list}");
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 300}}}))
        .await;
    c.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "legacy"}, "_meta": {"progressToken": 7}}}))
        .await;
    let (_, echo) = c.until_response(&json!(3)).await;
    assert_eq!(text(&echo), "legacy");
    assert_eq!(c.next().await["id"], 2, "answered as they finish");
    c.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        .await;
    assert_eq!(c.next().await["result"], json!({}));
    c.close_stdin().await;
    assert!(c.expect_end().await.is_empty());
    assert!(c.exit_status().await.success());
}

//! The Tasks extension on one replica: the same handler inline and as a task, principal
//! isolation, limits, `notifications/tasks` on listen streams, cancellation that really
//! stops the handler, and the shutdown that fails what still runs. (The conformance suite's
//! `tasks-*` scenarios are in `conformance`; several replicas in `tasks_cluster`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::handler::TaskSupport;
use stateless_mcp::tasks::TaskSettings;
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};

use crate::support::listen::Listener;
use crate::support::schema::assert_valid;
use crate::support::{Client, Exchange, start, start_with_test_principal};

/// `_meta` declaring the Tasks extension (and form elicitation).
pub(crate) fn task_meta() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities":
           {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}})
}

/// Calls `tool` as a client with the extension; asserts a flat `CreateTaskResult` and
/// returns its task id.
pub(crate) async fn create(client: &Client, tool: &str, arguments: Value) -> String {
    let e = client
        .request(
            "tools/call",
            json!(1),
            json!({"name": tool, "arguments": arguments, "_meta": task_meta()}),
        )
        .await;
    let r = e.result();
    assert_eq!(r["resultType"], "task", "{r}");
    for key in [
        "task",
        "result",
        "error",
        "inputRequests",
        "requestState",
        "ttl",
    ] {
        assert!(r.get(key).is_none(), "{key} in {r}");
    }
    assert!(r["ttlMs"].as_u64().is_some_and(|t| t > 0), "{r}");
    assert!(r["pollIntervalMs"].as_u64().is_some_and(|t| t > 0), "{r}");
    assert!(r["createdAt"].as_str().unwrap().ends_with('Z'), "{r}");
    r["taskId"].as_str().unwrap().to_owned()
}

/// `tasks/get`, `tasks/update` or `tasks/cancel` on `task_id`, with the extension declared.
pub(crate) async fn task_request(
    client: &Client,
    method: &str,
    task_id: &str,
    extra: Value,
) -> Exchange {
    let mut params = json!({"taskId": task_id, "_meta": task_meta()});
    if let Value::Object(more) = extra {
        params.as_object_mut().unwrap().extend(more);
    }
    client.request(method, json!(2), params).await
}

/// The task's detailed view (its inlined tool result checked against the schema).
pub(crate) async fn get(client: &Client, task_id: &str) -> Value {
    let e = task_request(client, "tasks/get", task_id, json!({})).await;
    let r = e.result().clone();
    assert_eq!(r["resultType"], "complete", "{r}");
    assert_eq!(r["taskId"], task_id);
    if let Some(result) = r.get("result") {
        assert_valid("CallToolResult", result);
    }
    r
}

/// Polls `tasks/get` every 20 ms until the status is `status` (or `timeout` passes).
pub(crate) async fn until(
    client: &Client,
    task_id: &str,
    status: &str,
    timeout: Duration,
) -> Value {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let r = get(client, task_id).await;
        if r["status"] == status {
            return r;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {task_id} did not become {status} within {timeout:?}: {r}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// A server with only [`forever`], serving, with one task of it created.
async fn one_forever_task() -> (
    Server,
    crate::support::TestServer,
    Client,
    String,
    Arc<AtomicBool>,
) {
    let dropped = Arc::new(AtomicBool::new(false));
    let server = Server::builder()
        .tool(forever(dropped.clone()))
        .build()
        .unwrap();
    let srv = start(server.clone()).await;
    let client = Client::new(&srv.url);
    let id = create(&client, "forever", json!({})).await;
    (server, srv, client, id, dropped)
}

/// A tool that runs until cancelled, and records that it was dropped.
fn forever(dropped: Arc<AtomicBool>) -> ToolDef {
    ToolDef::new("forever")
        .task_support(TaskSupport::Required)
        .handler(move |_ctx: RequestContext, _: NoArgs| {
            let dropped = dropped.clone();
            async move {
                struct Flag(Arc<AtomicBool>);
                impl Drop for Flag {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::SeqCst);
                    }
                }
                let _flag = Flag(dropped);
                std::future::pending::<()>().await;
                Ok::<_, HandlerError>("never")
            }
        })
}

fn big() -> ToolDef {
    ToolDef::new("big")
        .task_support(TaskSupport::Optional)
        .handler(|_ctx: RequestContext, _: NoArgs| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok::<_, HandlerError>("x".repeat(10_000))
        })
}

fn fixtures(settings: TaskSettings) -> Server {
    let b = Server::builder().task_settings(settings);
    stateless_mcp::fixtures::conformance(b).build().unwrap()
}

#[tokio::test]
async fn the_same_handler_answers_inline_and_as_a_task() {
    let srv = start(fixtures(TaskSettings::default())).await;
    let client = Client::new(&srv.url);
    // Without the extension: a multi-round-trip round on the tools/call itself.
    let inline = client
        .request(
            "tools/call",
            json!(1),
            json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"},
                   "_meta": {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}),
        )
        .await;
    assert_eq!(inline.result()["resultType"], "input_required");
    assert!(inline.result()["inputRequests"]["confirm"].is_object());
    // With it: a task that asks the same question, and resumes with the answer.
    let id = create(&client, "confirm_delete", json!({"filename": "a.txt"})).await;
    let waiting = until(&client, &id, "input_required", Duration::from_secs(5)).await;
    assert_eq!(
        waiting["inputRequests"]["confirm"],
        inline.result()["inputRequests"]["confirm"]
    );
    let ack = task_request(
        &client,
        "tasks/update",
        &id,
        json!({"inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    assert_eq!(
        ack.result(),
        &json!({"resultType": "complete", "_meta": ack.result()["_meta"]})
    );
    let done = until(&client, &id, "completed", Duration::from_secs(5)).await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt");
    assert!(done.get("inputRequests").is_none());
}

fn as_user(url: &str, user: &str) -> Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-test-user", user.parse().unwrap());
    let mut c = Client::new(url);
    c.http = crate::support::http_builder()
        .default_headers(headers)
        .build()
        .unwrap();
    c
}

#[tokio::test]
async fn a_task_belongs_to_the_principal_that_created_it() {
    let srv = start_with_test_principal(fixtures(TaskSettings::default())).await;
    let (alice, bob, anonymous) = (
        as_user(&srv.url, "alice"),
        as_user(&srv.url, "bob"),
        Client::new(&srv.url),
    );
    let id = create(&alice, "slow_compute", json!({"seconds": 60})).await;
    let unknown = task_request(&alice, "tasks/get", "no-such-task", json!({})).await;
    assert_eq!(unknown.error_code(), -32602);
    for other in [&bob, &anonymous] {
        for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
            let e = task_request(other, method, &id, json!({"inputResponses": {}})).await;
            assert_eq!(e.error_code(), -32602, "{method}: {}", e.body);
            assert_eq!(
                e.response()["error"]["message"],
                format!("Unknown task: {id}"),
                "another principal's task reads as an unknown one"
            );
        }
    }
    assert_eq!(
        get(&alice, &id).await["status"],
        "working",
        "bob's cancel did nothing"
    );
    task_request(&alice, "tasks/cancel", &id, json!({})).await;
    until(&alice, &id, "cancelled", Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_cancelled_task_stops_its_handler() {
    let (server, _srv, client, id, dropped) = one_forever_task().await;
    assert_eq!(server.running_tasks(), 1);
    let ack = task_request(&client, "tasks/cancel", &id, json!({})).await;
    assert_eq!(ack.result()["resultType"], "complete");
    assert!(ack.result().get("status").is_none());
    assert_eq!(get(&client, &id).await["status"], "cancelled");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !dropped.load(Ordering::SeqCst) || server.running_tasks() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the handler still runs"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Idempotent on a terminal task.
    let again = task_request(&client, "tasks/cancel", &id, json!({})).await;
    assert_eq!(again.result()["resultType"], "complete");
}

#[tokio::test]
async fn limits_refuse_clearly() {
    let dropped = Arc::new(AtomicBool::new(false));
    let server = Server::builder()
        .tool(forever(dropped))
        .tool(big())
        .task_settings(
            TaskSettings::default()
                .max_running(1)
                .max_result_bytes(1_000),
        )
        .build()
        .unwrap();
    let srv = start(server).await;
    let client = Client::new(&srv.url);
    let first = create(&client, "forever", json!({})).await;
    let refused = client
        .request(
            "tools/call",
            json!(3),
            json!({"name": "forever", "_meta": task_meta()}),
        )
        .await;
    assert_eq!(refused.status, 503);
    assert!(refused.headers.get("retry-after").is_some());
    assert_eq!(refused.error_code(), -32603);
    assert_eq!(refused.response()["error"]["data"]["reason"], "max_running");
    task_request(&client, "tasks/cancel", &first, json!({})).await;
    // The slot is free again once the cancelled handler stopped.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let id = loop {
        let e = client
            .request(
                "tools/call",
                json!(4),
                json!({"name": "big", "_meta": task_meta()}),
            )
            .await;
        if e.response().get("result").is_some() {
            break e.result()["taskId"].as_str().unwrap().to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "{}", e.body);
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let failed = until(&client, &id, "failed", Duration::from_secs(5)).await;
    assert_eq!(failed["error"]["code"], -32603);
    assert_eq!(failed["error"]["data"]["reason"], "result_too_large");
    assert!(failed.get("result").is_none());
}

#[tokio::test]
async fn a_server_without_task_tools_offers_no_tasks() {
    let srv = start(crate::support::fixtures_server()).await;
    let client = Client::new(&srv.url);
    let discover = client.request("server/discover", json!(1), json!({})).await;
    assert_eq!(
        discover.result()["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    assert!(discover.result()["capabilities"].get("tasks").is_none());
    let plain = start(
        stateless_mcp::fixtures::demo(Server::builder())
            .build()
            .unwrap(),
    )
    .await;
    let client = Client::new(&plain.url);
    let discover = client.request("server/discover", json!(1), json!({})).await;
    // The demo toolset declares the Skills extension (its tour skill), never the Tasks one.
    let extensions = &discover.result()["capabilities"]["extensions"];
    assert!(
        extensions.get("io.modelcontextprotocol/tasks").is_none(),
        "{extensions}"
    );
    assert!(extensions.get("io.modelcontextprotocol/skills").is_some());
    for method in [
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "tasks/result",
        "tasks/list",
    ] {
        let e = task_request(&client, method, "t", json!({})).await;
        assert_eq!(e.error_code(), -32601, "{method}");
    }
}

#[tokio::test]
async fn listen_streams_hear_the_status_of_the_tasks_they_name() {
    let srv = start_with_test_principal(fixtures(TaskSettings::default())).await;
    let alice = as_user(&srv.url, "alice");
    let id = create(&alice, "slow_compute", json!({"seconds": 0.5})).await;
    let other = create(&alice, "slow_compute", json!({"seconds": 60})).await;
    let mut mine = Listener::open_with(
        &alice,
        json!("l1"),
        json!({"taskIds": [id]}),
        &[("x-test-user", "alice")],
    )
    .await;
    let ack = mine.next().await.unwrap();
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    // Bob names alice's task: he hears nothing of it.
    let bob = as_user(&srv.url, "bob");
    let mut snooping = Listener::open_with(
        &bob,
        json!("l2"),
        json!({"taskIds": [id]}),
        &[("x-test-user", "bob")],
    )
    .await;
    snooping.next().await.unwrap();
    let m = mine.next().await.unwrap();
    assert_eq!(m["method"], "notifications/tasks");
    assert_eq!(m["params"]["taskId"], id.as_str());
    assert_eq!(m["params"]["status"], "completed");
    assert_eq!(
        m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "l1"
    );
    task_request(&alice, "tasks/cancel", &other, json!({})).await;
    let quiet = tokio::time::timeout(Duration::from_millis(300), snooping.next()).await;
    assert!(quiet.is_err(), "another principal hears nothing: {quiet:?}");
    let quiet = tokio::time::timeout(Duration::from_millis(100), mine.next()).await;
    assert!(quiet.is_err(), "a task it did not name: nothing: {quiet:?}");
}

#[tokio::test]
async fn shutting_down_fails_what_still_runs() {
    let (server, _srv, client, id, dropped) = one_forever_task().await;
    assert_eq!(server.stop_tasks().await, 1);
    let failed = get(&client, &id).await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], -32603);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !dropped.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the handler still runs"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

//! Per-tool tower layers over HTTP: the time limit (per tool, and the server's default)
//! answers a tool error and drops the handler's future; a concurrency limit makes extra calls
//! wait, or refuses them with `LoadShedLayer`; tower's own `TimeoutLayer`; a user layer sees
//! every call and its answer, and its own failure is an "Internal error" tool result; a tool
//! added at runtime gets the same.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use stateless_mcp::handler::{ToolRequest, ToolService};
use stateless_mcp::{HandlerError, RequestContext, Server, ServerBuilder, ToolDef};
use tokio::sync::{Notify, oneshot};
use tower::ServiceExt as _;
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::timeout::TimeoutLayer;

use crate::support::{Client, start};

/// Calls `tool` with `arguments`; the result (status 200, schema-checked by the client).
async fn call(client: &Client, id: u64, tool: &str, arguments: Value) -> Value {
    let x = client
        .request(
            "tools/call",
            json!(id),
            json!({"name": tool, "arguments": arguments}),
        )
        .await;
    assert_eq!(x.status, 200, "{}", x.body);
    x.result().clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// Sends on drop: tells the test the handler's future was dropped.
struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// A tool that never finishes; it reports that it started, and its drop.
fn stalling(name: &str, started: oneshot::Sender<()>, dropped: oneshot::Sender<()>) -> ToolDef {
    let parts = Arc::new(Mutex::new(Some((started, dropped))));
    ToolDef::new(name).raw_handler(move |_ctx: RequestContext, _args: Value| {
        let parts = parts.lock().unwrap().take();
        async move {
            let (started, dropped) = parts.expect("called once");
            let _guard = DropSignal(Some(dropped));
            let _ = started.send(());
            std::future::pending::<()>().await;
            Ok::<_, HandlerError>("never")
        }
    })
}

/// A tool that sleeps for `ms` and answers "done".
fn sleeping(name: &str, ms: u64) -> ToolDef {
    ToolDef::new(name).raw_handler(move |_ctx: RequestContext, _args: Value| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, HandlerError>("done")
    })
}

/// A tool that counts its entries and then waits for `gate` before answering "done".
fn gated(name: &str, entered: Arc<AtomicUsize>, gate: Arc<Notify>) -> ToolDef {
    ToolDef::new(name).raw_handler(move |_ctx: RequestContext, _args: Value| {
        let (entered, gate) = (entered.clone(), gate.clone());
        async move {
            entered.fetch_add(1, Ordering::SeqCst);
            gate.notified().await;
            Ok::<_, HandlerError>("done")
        }
    })
}

async fn serve(b: ServerBuilder) -> (crate::support::TestServer, Client) {
    let server = start(b.build().unwrap()).await;
    let client = Client::new(&server.url);
    (server, client)
}

/// Waits (at most 10 s) until `n` calls have entered the handler.
async fn until_entered(entered: &AtomicUsize, n: usize) {
    for _ in 0..1000 {
        if entered.load(Ordering::SeqCst) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{n} calls never entered the handler");
}

#[tokio::test]
async fn a_timed_out_call_is_a_tool_error_and_its_handler_future_is_dropped() {
    let (started_tx, started) = oneshot::channel();
    let (dropped_tx, dropped) = oneshot::channel();
    let tool = stalling("stall", started_tx, dropped_tx).timeout(Duration::from_millis(200));
    let (_server, client) = serve(Server::builder().tool(tool)).await;

    let result = call(&client, 1, "stall", json!({})).await;
    assert!(is_error(&result), "{result}");
    assert_eq!(text(&result), "Tool stall timed out after 200 ms");
    started.await.expect("the handler ran");
    tokio::time::timeout(Duration::from_secs(5), dropped)
        .await
        .expect("the handler's future is dropped when the time is up")
        .expect("dropped, not leaked");
}

#[tokio::test]
async fn the_server_default_applies_unless_the_tool_sets_its_own() {
    let b = Server::builder()
        .tool_timeout(Duration::from_millis(100))
        .tool(sleeping("slow_default", 1_000))
        .tool(sleeping("slow_own", 300).timeout(Duration::from_secs(10)))
        .tool(sleeping("quick", 0));
    let (_server, client) = serve(b).await;

    let r = call(&client, 1, "slow_default", json!({})).await;
    assert!(is_error(&r), "{r}");
    assert_eq!(text(&r), "Tool slow_default timed out after 100 ms");
    let r = call(&client, 2, "slow_own", json!({})).await;
    assert!(
        !is_error(&r),
        "its own 10 s replace the default 100 ms: {r}"
    );
    assert_eq!(text(&r), "done");
    let r = call(&client, 3, "quick", json!({})).await;
    assert_eq!(text(&r), "done");
}

#[tokio::test]
async fn over_a_concurrency_limit_a_call_waits_for_a_slot() {
    let (entered, gate) = (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()));
    let tool =
        gated("one_at_a_time", entered.clone(), gate.clone()).layer(ConcurrencyLimitLayer::new(1));
    let (_server, client) = serve(Server::builder().tool(tool)).await;

    let (c1, c2) = (client.clone(), client.clone());
    let first = tokio::spawn(async move { call(&c1, 1, "one_at_a_time", json!({})).await });
    until_entered(&entered, 1).await;
    let second = tokio::spawn(async move { call(&c2, 2, "one_at_a_time", json!({})).await });
    // The second call is in the server, waiting for the slot: it never enters.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        entered.load(Ordering::SeqCst),
        1,
        "the limit holds the second call"
    );
    assert!(
        !second.is_finished(),
        "the second call waits, it is not refused"
    );

    gate.notify_one();
    assert_eq!(text(&first.await.unwrap()), "done");
    until_entered(&entered, 2).await;
    gate.notify_one();
    assert_eq!(text(&second.await.unwrap()), "done");
}

#[tokio::test]
async fn with_load_shed_a_call_over_the_limit_is_refused_at_once() {
    let (entered, gate) = (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()));
    let tool = gated("exclusive", entered.clone(), gate.clone())
        .layer(ConcurrencyLimitLayer::new(1))
        .layer(LoadShedLayer::new());
    let (_server, client) = serve(Server::builder().tool(tool)).await;

    let c1 = client.clone();
    let first = tokio::spawn(async move { call(&c1, 1, "exclusive", json!({})).await });
    until_entered(&entered, 1).await;
    let refused = call(&client, 2, "exclusive", json!({})).await;
    assert!(is_error(&refused), "{refused}");
    assert_eq!(
        text(&refused),
        "Tool exclusive is busy (too many calls at once); try again later"
    );
    assert_eq!(entered.load(Ordering::SeqCst), 1);
    gate.notify_one();
    assert_eq!(text(&first.await.unwrap()), "done");
}

#[tokio::test]
async fn towers_own_timeout_layer_answers_a_timed_out_tool_error() {
    let (started_tx, started) = oneshot::channel();
    let (dropped_tx, dropped) = oneshot::channel();
    let tool = stalling("stall", started_tx, dropped_tx)
        .layer(TimeoutLayer::new(Duration::from_millis(100)));
    let (_server, client) = serve(Server::builder().tool(tool)).await;

    let result = call(&client, 1, "stall", json!({})).await;
    assert!(is_error(&result), "{result}");
    assert_eq!(text(&result), "Tool stall timed out");
    started.await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), dropped)
        .await
        .expect("dropped")
        .unwrap();
}

/// What the audit layer saw: (tool, arguments, the answer's text or "tool error").
type Audit = Arc<Mutex<Vec<(String, Value, String)>>>;

#[tokio::test]
async fn a_user_layer_sees_every_call_and_its_answer() {
    let log: Audit = Arc::default();
    let echo = ToolDef::new("shout")
        .input_schema(
            serde_json::from_value(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}, "deny": {"type": "boolean"}}
            }))
            .unwrap(),
        )
        .raw_handler(|_ctx: RequestContext, args: Value| async move {
            match args["text"].as_str() {
                Some(t) => Ok(t.to_uppercase()),
                None => Err(HandlerError::new("no text")),
            }
        })
        // A user layer: records each call and its answer; refuses `{"deny": true}` with its
        // own error (not a tool error).
        .layer(tower::layer::layer_fn({
            let log = log.clone();
            move |inner: ToolService| {
                let log = log.clone();
                tower::service_fn(move |req: ToolRequest| {
                    let (log, inner) = (log.clone(), inner.clone());
                    async move {
                        let (name, args) = (req.name().to_owned(), req.arguments().clone());
                        if args["deny"] == json!(true) {
                            log.lock().unwrap().push((name, args, "denied".into()));
                            return Err("denied by audit".into());
                        }
                        let response = inner.oneshot(req).await?;
                        let seen = match &response {
                            Ok(r) => serde_json::to_value(r).unwrap()["content"][0]["text"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                            Err(_) => "tool error".into(),
                        };
                        log.lock().unwrap().push((name, args, seen));
                        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
                    }
                })
            }
        }));
    let (_server, client) = serve(Server::builder().tool(echo)).await;

    assert_eq!(
        text(&call(&client, 1, "shout", json!({"text": "hi"})).await),
        "HI"
    );
    let r = call(&client, 2, "shout", json!({})).await;
    assert_eq!((is_error(&r), text(&r)), (true, "no text"));
    let r = call(&client, 3, "shout", json!({"deny": true})).await;
    assert_eq!(
        (is_error(&r), text(&r)),
        (true, "Internal error"),
        "a layer's own failure reaches the model as a generic tool error"
    );
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            ("shout".into(), json!({"text": "hi"}), "HI".into()),
            ("shout".into(), json!({}), "tool error".into()),
            ("shout".into(), json!({"deny": true}), "denied".into()),
        ]
    );
}

/// Calls `tool` (no arguments), failing after 10 s (a bound against hanging: without the
/// server's time limit the stalling tool never answers).
async fn call_or_hang(client: &Client, id: u64, tool: &str) -> Value {
    let called = call(client, id, tool, json!({}));
    tokio::time::timeout(Duration::from_secs(10), called)
        .await
        .unwrap_or_else(|_| panic!("{tool} got no time limit"))
}

#[tokio::test]
async fn a_tool_added_at_runtime_is_served_like_one_given_to_the_builder() {
    let server = Server::builder()
        .advertise_tools()
        .tool_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let catalog = server.catalog();
    let served = start(server).await;
    let client = Client::new(&served.url);
    let (started_tx, started) = oneshot::channel();
    let (dropped_tx, dropped) = oneshot::channel();
    let (entered, gate) = (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()));
    catalog
        .change()
        .add_tool(stalling("stall", started_tx, dropped_tx))
        .add_tool(
            gated("exclusive", entered.clone(), gate.clone())
                .timeout(Duration::from_secs(60))
                .layer(ConcurrencyLimitLayer::new(1))
                .layer(LoadShedLayer::new()),
        )
        .apply()
        .unwrap();

    // The server's default time limit.
    let result = call_or_hang(&client, 1, "stall").await;
    assert!(is_error(&result), "{result}");
    assert_eq!(text(&result), "Tool stall timed out after 100 ms");
    started.await.expect("the handler ran");
    tokio::time::timeout(Duration::from_secs(5), dropped)
        .await
        .expect("the handler's future is dropped when the time is up")
        .expect("dropped, not leaked");

    // Its own layers (and its own time limit, which replaces the default).
    let c1 = client.clone();
    let first = tokio::spawn(async move { call(&c1, 2, "exclusive", json!({})).await });
    until_entered(&entered, 1).await;
    let refused = call(&client, 3, "exclusive", json!({})).await;
    assert_eq!(
        text(&refused),
        "Tool exclusive is busy (too many calls at once); try again later"
    );
    gate.notify_one();
    assert_eq!(text(&first.await.unwrap()), "done");

    // A replacement is layered too.
    let (started_tx, _started) = oneshot::channel();
    let (dropped_tx, _dropped) = oneshot::channel();
    catalog
        .change()
        .replace_tool(stalling("exclusive", started_tx, dropped_tx))
        .apply()
        .unwrap();
    let result = call_or_hang(&client, 4, "exclusive").await;
    assert_eq!(text(&result), "Tool exclusive timed out after 100 ms");
}

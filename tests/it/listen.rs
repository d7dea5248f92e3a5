//! `subscriptions/listen` over real sockets: acknowledgement, filtering, tagging,
//! sub-resources, several streams, keepalive, limits, lifetime, graceful shutdown and slow
//! consumers.

use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use stateless_mcp::backends::MemoryBus;
use stateless_mcp::notify::Notifier;
use stateless_mcp::settings::ListenLimits;
use stateless_mcp::{HandlerError, Server, StreamableHttp, ToolDef};
use std::sync::Arc;

use crate::support::listen::{Listener, subscription_id};
use crate::support::{Client, start, start_http};

fn builder() -> stateless_mcp::ServerBuilder {
    let b = stateless_mcp::fixtures::demo(Server::builder());
    stateless_mcp::fixtures::conformance(b)
}

fn fixtures(limits: ListenLimits) -> Server {
    builder().listen_limits(limits).build().unwrap()
}

async fn ack(listener: &mut Listener, id: &Value) -> Value {
    let first = listener.next().await.expect("an acknowledgement");
    assert_eq!(first["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(subscription_id(&first), id);
    first["params"]["notifications"].clone()
}

#[tokio::test]
async fn acknowledges_first_then_sends_only_what_was_asked_tagged_with_the_id() {
    let server = fixtures(ListenLimits::default());
    let notifier = server.notifier().clone();
    let srv = start(server).await;
    let client = Client::new(&srv.url);
    let id = json!("listen-1");
    let mut l = Listener::open(
        &client,
        id.clone(),
        json!({"toolsListChanged": true, "promptsListChanged": false,
               "resourceSubscriptions": ["test://watched-resource"]}),
    )
    .await;
    assert_eq!(l.status, 200);
    assert_eq!(l.headers["content-type"], "text/event-stream");
    assert_eq!(l.headers["x-accel-buffering"], "no");
    assert_eq!(
        ack(&mut l, &id).await,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]})
    );
    notifier.prompts_list_changed().await.unwrap();
    notifier.resources_list_changed().await.unwrap();
    notifier.resource_updated("test://other").await.unwrap();
    notifier
        .resource_updated("test://watched-resourceX")
        .await
        .unwrap();
    notifier.tools_list_changed().await.unwrap();
    notifier
        .resource_updated("test://watched-resource/part")
        .await
        .unwrap();
    notifier
        .resource_updated("test://watched-resource")
        .await
        .unwrap();
    let expected = [
        ("notifications/tools/list_changed", None),
        (
            "notifications/resources/updated",
            Some("test://watched-resource/part"),
        ),
        (
            "notifications/resources/updated",
            Some("test://watched-resource"),
        ),
    ];
    for (method, uri) in expected {
        let m = l.next().await.unwrap();
        assert_eq!(m["method"], method, "{m}");
        assert_eq!(subscription_id(&m), &id);
        if let Some(uri) = uri {
            assert_eq!(m["params"]["uri"], uri);
        }
    }
}

#[tokio::test]
async fn a_tool_call_on_another_connection_reaches_every_stream_with_its_own_id() {
    let srv = start(fixtures(ListenLimits::default())).await;
    let client = Client::new(&srv.url);
    let mut a = Listener::open(&client, json!(7), json!({"toolsListChanged": true})).await;
    let mut b = Listener::open(&client, json!("b"), json!({"toolsListChanged": true})).await;
    let mut prompts_only =
        Listener::open(&client, json!("p"), json!({"promptsListChanged": true})).await;
    ack(&mut a, &json!(7)).await;
    ack(&mut b, &json!("b")).await;
    ack(&mut prompts_only, &json!("p")).await;
    client.trigger_tool_change(json!(1)).await;
    for (l, id) in [(&mut a, json!(7)), (&mut b, json!("b"))] {
        let m = l.next().await.unwrap();
        assert_eq!(m["method"], "notifications/tools/list_changed");
        assert_eq!(subscription_id(&m), &id);
    }
    client
        .request(
            "tools/call",
            json!(2),
            json!({"name": "test_trigger_prompt_change", "arguments": {}}),
        )
        .await;
    // Events from one publisher arrive in order: had the tool change leaked through the
    // filter, it would come first.
    assert_eq!(
        prompts_only.next_kind().await,
        "notifications/prompts/list_changed"
    );
}

#[tokio::test]
async fn shutdown_closes_streams_with_the_graceful_result() {
    let server = fixtures(ListenLimits::default());
    let srv = start(server.clone()).await;
    let client = Client::new(&srv.url);
    let mut l = Listener::open(&client, json!("s"), json!({"toolsListChanged": true})).await;
    ack(&mut l, &json!("s")).await;
    assert_eq!(server.listen_streams(), 1);
    server.close_listen_streams();
    let last = l.next().await.expect("the graceful result");
    assert_eq!(last["id"], "s");
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "s"
    );
    assert!(l.next().await.is_none(), "the stream ends after the result");
}

#[tokio::test]
async fn a_full_replica_answers_503_with_retry_after_and_frees_slots() {
    let server = fixtures(
        ListenLimits::default()
            .max_streams(1)
            .retry_after(Duration::from_secs(3)),
    );
    let srv = start(server.clone()).await;
    let client = Client::new(&srv.url);
    let mut first = Listener::open(&client, json!(1), json!({"toolsListChanged": true})).await;
    ack(&mut first, &json!(1)).await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
                      "params": crate::support::with_meta(json!({"notifications": {}}))});
    let full = client
        .send(
            Client::headers("subscriptions/listen", None),
            body.to_string(),
            Some("subscriptions/listen"),
        )
        .await;
    assert_eq!(full.status, 503);
    assert_eq!(full.headers["retry-after"], "3");
    assert_eq!(full.response()["id"], 2);
    drop(first);
    // The server notices the closed connection on its next write or poll; wait for it.
    for _ in 0..200 {
        if server.listen_streams() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        server.notifier().tools_list_changed().await.unwrap();
    }
    assert_eq!(server.listen_streams(), 0);
    let mut again = Listener::open(&client, json!(3), json!({})).await;
    assert_eq!(ack(&mut again, &json!(3)).await, json!({}));
}

#[tokio::test]
async fn streams_end_gracefully_at_their_maximum_lifetime() {
    let srv = start(fixtures(
        ListenLimits::default().max_lifetime(Some(Duration::from_millis(300))),
    ))
    .await;
    let client = Client::new(&srv.url);
    let mut l = Listener::open(&client, json!("life"), json!({"toolsListChanged": true})).await;
    ack(&mut l, &json!("life")).await;
    assert_eq!(l.next_kind().await, "result");
    assert!(l.next().await.is_none());
}

#[tokio::test]
async fn idle_streams_get_keepalive_comments() {
    let http = StreamableHttp::new(fixtures(ListenLimits::default()))
        .keep_alive(Duration::from_millis(200));
    let srv = start_http(http).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                      "params": crate::support::with_meta(json!({"notifications": {"toolsListChanged": true}}))});
    let mut req = crate::support::http().post(&srv.url).body(body.to_string());
    for (k, v) in Client::headers("subscriptions/listen", None) {
        req = req.header(k, v);
    }
    let mut bytes = req.send().await.unwrap().bytes_stream();
    let mut seen = String::new();
    while !seen.lines().any(|l| l.starts_with(':')) {
        let chunk = tokio::time::timeout(Duration::from_secs(20), bytes.next())
            .await
            .expect("data within 20 s")
            .expect("stream open")
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("notifications/subscriptions/acknowledged"));
}

#[tokio::test]
async fn bad_listen_requests_are_refused() {
    let srv = start(fixtures(ListenLimits::default())).await;
    let client = Client::new(&srv.url);
    for (id, notifications) in [
        (1, Value::Null),
        (2, json!([])),
        (3, json!({"resourceSubscriptions": ["no-scheme"]})),
        (4, json!({"toolsListChanged": "yes"})),
    ] {
        let mut params = json!({});
        if !notifications.is_null() {
            params["notifications"] = notifications;
        }
        let r = client
            .request("subscriptions/listen", json!(id), params)
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.error_code(), -32602);
    }
    // A JSON-only client cannot take a stream.
    let mut headers = Client::headers("subscriptions/listen", None);
    headers[1].1 = "application/json".into();
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
                      "params": crate::support::with_meta(json!({"notifications": {}}))});
    let r = client.send(headers, body.to_string(), None).await;
    assert_eq!(r.status, 406);
    // A server with nothing to notify about does not offer listen.
    let empty = start(Server::builder().build().unwrap()).await;
    let r = Client::new(&empty.url)
        .request(
            "subscriptions/listen",
            json!(6),
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await;
    assert_eq!((r.status, r.error_code()), (404, -32601));
}

#[tokio::test]
async fn a_stalled_consumer_is_resynced_instead_of_queued() {
    let notifier = Notifier::new(Arc::new(MemoryBus::new(16)));
    let server = builder().notifier(notifier.clone()).build().unwrap();
    let srv = start(server).await;
    let client = Client::new(&srv.url);
    let mut l = Listener::open(
        &client,
        json!("slow"),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://big"]}),
    )
    .await;
    ack(&mut l, &json!("slow")).await;
    // The client reads nothing while ~100 MB of updates are published: far more than the
    // socket buffers hold, so the server's stream stalls and falls behind the ring.
    let padding = "x".repeat(1000);
    const PUBLISHED: usize = 100_000;
    for i in 0..PUBLISHED {
        notifier
            .resource_updated(format!("test://big/{i}/{padding}"))
            .await
            .unwrap();
        if i % 1000 == 0 {
            tokio::task::yield_now().await;
        }
    }
    notifier.resource_updated("test://big/END").await.unwrap();
    let (mut received, mut resynced) = (0usize, false);
    loop {
        let m = l.next().await.unwrap();
        match m["method"].as_str().unwrap() {
            // Never published: only a resync sends it.
            "notifications/tools/list_changed" => resynced = true,
            "notifications/resources/updated" if m["params"]["uri"] == "test://big/END" => break,
            "notifications/resources/updated" => received += 1,
            other => panic!("unexpected {other}"),
        }
    }
    assert!(resynced, "a lagging stream is told to resync");
    assert!(
        received < PUBLISHED / 2,
        "{received} of {PUBLISHED} updates were queued for a stalled client"
    );
}

#[tokio::test]
async fn handlers_announce_changes_through_their_context() {
    let server = Server::builder()
        .tool(ToolDef::new("add_tool").raw_handler(
            |ctx: stateless_mcp::RequestContext, _: Value| async move {
                ctx.notifier().tools_list_changed().await?;
                Ok::<_, HandlerError>("added")
            },
        ))
        .build()
        .unwrap();
    let srv = start(server).await;
    let client = Client::new(&srv.url);
    let mut l = Listener::open(&client, json!(1), json!({"toolsListChanged": true})).await;
    ack(&mut l, &json!(1)).await;
    client
        .request(
            "tools/call",
            json!(2),
            json!({"name": "add_tool", "arguments": {}}),
        )
        .await;
    assert_eq!(l.next_kind().await, "notifications/tools/list_changed");
}

//! Trace context across replicas (two `stateless-mcp` processes sharing a real
//! `redis-server` bus and task store): a `tasks/cancel` on one replica and the handler it
//! stops on the other are one trace; so are a legacy client's elicitation answer received on
//! one replica and its delivery to the `tools/call` on the other, and a list change made on
//! one replica and its delivery to the listen and legacy GET streams of the other. A request's
//! Redis round trips are client spans under its server span.

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use serde_json::json;

use super::receiver::{Received, Receiver, attr, hex};
use super::{CALLER, TRACE};
use crate::support::Client;
use crate::support::cluster::{Cluster, ClusterOptions, metric};
use crate::support::legacy::LegacyClient;
use crate::support::listen::Listener;
use crate::tasks::{create, task_meta};

const TOOLS_CHANGED: &str = "notifications/tools/list_changed";

/// Two replicas exporting to `receiver`, each naming itself in `service.instance.id`.
async fn cluster(receiver: &Receiver) -> Cluster {
    Cluster::start(ClusterOptions {
        replicas: 2,
        envs: vec![
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
                receiver.endpoint.clone(),
            ),
            ("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()),
            (
                "OTEL_RESOURCE_ATTRIBUTES".into(),
                "service.instance.id={replica}".into(),
            ),
        ],
        ..ClusterOptions::default()
    })
    .await
}

/// The replica that exported `span` (its `service.instance.id`).
fn replica(span: &Received) -> String {
    attr(&span.resource, "service.instance.id").unwrap_or_default()
}

/// Calls the fixture tool that announces a tool-list change on `client`'s replica, in the
/// caller's trace `trace`.
async fn change_tools(client: &Client, trace: &str) {
    let params = json!({"name": "test_trigger_tool_change", "arguments": {},
        "_meta": {"traceparent": format!("00-{trace}-{CALLER}-01")}});
    let x = client.request("tools/call", json!("change"), params).await;
    assert!(x.result().get("content").is_some(), "{}", x.body);
}

/// Checks that a list change made in `trace` on replica `from` was delivered on replica `to`
/// in the same trace: the request span on `from`, its publication (a producer span) under
/// it, and on `to` the delivery (a consumer span) whose parent is the publication.
async fn assert_delivered_in_trace(receiver: &Receiver, trace: &str, from: &str, to: &str) {
    let call = receiver
        .wait_for(trace, "tools/call test_trigger_tool_change")
        .await;
    assert_eq!(hex(&call.span.parent_span_id), CALLER);
    assert_eq!(replica(&call), from);
    let published = receiver.wait_for(trace, "mcp.bus.publish").await;
    assert_eq!(published.span.kind, SpanKind::Producer as i32);
    assert_eq!(replica(&published), from);
    assert!(
        receiver.descends_from(&published, &call),
        "{published:#?} under {call:#?}"
    );
    let delivered = receiver
        .wait_for_where(trace, "mcp.bus.deliver", |r| replica(r) == to)
        .await;
    assert_eq!(delivered.span.kind, SpanKind::Consumer as i32);
    assert_eq!(delivered.span.parent_span_id, published.span.span_id);
    assert_eq!(
        attr(&delivered.span.attributes, "mcp.bus.event").as_deref(),
        Some(TOOLS_CHANGED)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_and_its_delivery_on_another_replica_are_one_trace() {
    const LISTEN_TRACE: &str = "4cf92f3577b34da6a3ce929d0e0e4736";
    const GET_TRACE: &str = "6cf92f3577b34da6a3ce929d0e0e4736";
    let receiver = Receiver::start().await;
    let c = cluster(&receiver).await;
    let r1 = Client::new(&c.replica("r1").url);
    let r2 = Client::new(&c.replica("r2").url);

    // A listen stream on r2, the change made on r1.
    let mut listener = Listener::open(&r2, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(
        listener.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );
    change_tools(&r1, LISTEN_TRACE).await;
    assert_eq!(listener.next_kind().await, TOOLS_CHANGED);
    assert_delivered_in_trace(&receiver, LISTEN_TRACE, "r1", "r2").await;
    // r1 holds no stream: it delivers nothing, so no span of its own.
    let on_r1 = |r: &Received| r.span.name == "mcp.bus.deliver" && replica(r) == "r1";
    assert!(!receiver.spans().iter().any(on_r1));

    // A legacy (2025-11-25) GET stream on r1, the change made on r2.
    let legacy = LegacyClient::connect(&c.replica("r1").url, json!({})).await;
    let mut stream = legacy.open_stream().await;
    assert_eq!(stream.status, 200);
    change_tools(&r2, GET_TRACE).await;
    let note = stream.next().await.expect("the GET stream is open");
    assert_eq!(note["method"], TOOLS_CHANGED, "{note}");
    assert_delivered_in_trace(&receiver, GET_TRACE, "r2", "r1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_round_trip_is_a_client_span_under_the_request() {
    const STORE_TRACE: &str = "7cf92f3577b34da6a3ce929d0e0e4736";
    let receiver = Receiver::start().await;
    let c = cluster(&receiver).await;
    let r1 = Client::new(&c.replica("r1").url);
    // A task-augmented call: the task is written to the Redis task store.
    let mut meta = task_meta();
    meta["traceparent"] = json!(format!("00-{STORE_TRACE}-{CALLER}-01"));
    let x = r1
        .request(
            "tools/call",
            json!(1),
            json!({"name": "slow_compute", "arguments": {"seconds": 1}, "_meta": meta}),
        )
        .await;
    assert_eq!(x.result()["resultType"], "task", "{}", x.body);

    let call = receiver
        .wait_for(STORE_TRACE, "tools/call slow_compute")
        .await;
    assert_eq!(hex(&call.span.parent_span_id), CALLER);
    let store = store_round_trip(&receiver, STORE_TRACE, "EVAL", "tasks").await;
    let a = |k| attr(&store.span.attributes, k);
    assert_eq!(a("db.system.name").as_deref(), Some("redis"));
    assert_eq!(a("db.operation.name").as_deref(), Some("EVAL"));
    assert_eq!(a("error.type"), None);
    assert!(
        receiver.descends_from(&store, &call),
        "{store:#?} under {call:#?}"
    );
    // Its arguments (keys, scripts, the task) are never exported.
    assert!(
        store
            .span
            .attributes
            .iter()
            .all(|kv| !format!("{kv:?}").contains("slow_compute")),
        "{:?}",
        store.span.attributes
    );

    // A legacy session is loaded from the Redis session store before its request is read
    // through: the request span still gets its name and the caller's span as parent.
    const SESSION_TRACE: &str = "8cf92f3577b34da6a3ce929d0e0e4736";
    // Opened on r1 and used on r2, which has not read its settings yet (a replica keeps
    // them for a second).
    let legacy = LegacyClient::connect(&c.replica("r1").url, json!({}))
        .await
        .at(&c.replica("r2").url);
    let params = json!({"name": "echo", "arguments": {"text": "hi"},
        "_meta": {"traceparent": format!("00-{SESSION_TRACE}-{CALLER}-01")}});
    let x = legacy.request(json!(2), "tools/call", params).await;
    assert_eq!(x.status, 200, "{}", x.body);
    let call = receiver.wait_for(SESSION_TRACE, "tools/call echo").await;
    assert_eq!(hex(&call.span.parent_span_id), CALLER);
    let load = store_round_trip(&receiver, SESSION_TRACE, "HGETALL", "sessions").await;
    assert_eq!(replica(&load), "r2");
    assert!(
        receiver.descends_from(&load, &call),
        "{load:#?} under {call:#?}"
    );
}

/// The client span of a round trip `redis {command}` of the store `store` (its
/// `mcp.store`) in the trace `trace`.
async fn store_round_trip(
    receiver: &Receiver,
    trace: &str,
    command: &str,
    store: &str,
) -> Received {
    let of_store = |r: &Received| attr(&r.span.attributes, "mcp.store").as_deref() == Some(store);
    let span = receiver
        .wait_for_where(trace, &format!("redis {command}"), of_store)
        .await;
    assert_eq!(span.span.kind, SpanKind::Client as i32);
    span
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_forwarded_over_the_bus_stays_in_the_callers_trace() {
    const ANSWER_TRACE: &str = "3bf92f3577b34da6a3ce929d0e0e4736";
    const ANSWER_CALLER: &str = "20f067aa0ba902b7";
    let receiver = Receiver::start().await;
    let c = cluster(&receiver).await;
    let on_a = LegacyClient::connect(&c.replica("r1").url, json!({"elicitation": {}})).await;
    let mut on_b = on_a.clone();
    on_b.url = c.replica("r2").url.clone();
    // The client's trace: the call on r1, the answer (its HTTP `traceparent`) on r2.
    let mut call = on_a
        .stream_request(
            json!(3),
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {"message": "Name?"},
                "_meta": {"traceparent": format!("00-{ANSWER_TRACE}-{CALLER}-01")}}),
        )
        .await;
    let ask = call.next().await.unwrap();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    on_b.extra.push((
        "traceparent".into(),
        format!("00-{ANSWER_TRACE}-{ANSWER_CALLER}-01"),
    ));
    let answer = json!({"action": "accept", "content": {"username": "u", "email": "e"}});
    assert_eq!(on_b.answer(&ask["id"], answer).await, 202);
    let done = call.next().await.unwrap();
    assert_eq!(done["id"], 3);

    // r2: the answer's span, child of the client's; r1: the delivery, child of r2's span.
    let received = receiver.wait_for(ANSWER_TRACE, "mcp.input_answer").await;
    assert_eq!(hex(&received.span.parent_span_id), ANSWER_CALLER);
    let delivered = receiver
        .wait_for(ANSWER_TRACE, "mcp.input_answer.deliver")
        .await;
    assert_eq!(delivered.span.parent_span_id, received.span.span_id);
    let call = receiver
        .wait_for(ANSWER_TRACE, "tools/call test_elicitation")
        .await;
    assert_eq!(hex(&call.span.parent_span_id), CALLER);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_one_replica_and_the_stop_on_the_other_are_one_trace() {
    let receiver = Receiver::start().await;
    let c = cluster(&receiver).await;
    let r1 = Client::new(&c.replica("r1").url);
    let r2 = Client::new(&c.replica("r2").url);
    let id = create(&r1, "slow_compute", json!({"seconds": 60})).await;
    for _ in 0..200 {
        if metric(c.replica("r1"), "mcp_tasks_running").await == 1.0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let mut meta = task_meta();
    meta["traceparent"] = json!(format!("00-{TRACE}-{CALLER}-01"));
    let ack = r2
        .request(
            "tasks/cancel",
            json!(2),
            json!({"taskId": id, "_meta": meta}),
        )
        .await;
    assert_eq!(ack.result()["resultType"], "complete", "{}", ack.body);

    // On r2: the request span, child of the caller's span.
    let cancel = receiver.wait_for(TRACE, "tasks/cancel").await;
    assert_eq!(hex(&cancel.span.parent_span_id), CALLER);
    // The task store is the bus's Redis, so the change is published by the store's write:
    // that write (an EVAL) runs inside the publication's producer span, under the request.
    let published = receiver.wait_for(TRACE, "mcp.bus.publish").await;
    assert_eq!(published.span.kind, SpanKind::Producer as i32);
    assert_eq!(replica(&published), "r2");
    assert!(receiver.descends_from(&published, &cancel));
    let write = store_round_trip(&receiver, TRACE, "EVAL", "tasks").await;
    assert!(
        receiver.descends_from(&write, &published),
        "{write:#?} under {published:#?}"
    );
    // On r1 (which never saw the request): the handler stopped, in the same trace, a child
    // of a span of r2's.
    let stop = receiver.wait_for(TRACE, "mcp.task.stop").await;
    let spans_of_trace: Vec<_> = receiver
        .spans()
        .into_iter()
        .filter(|r| hex(&r.span.trace_id) == TRACE)
        .collect();
    let parent = spans_of_trace
        .iter()
        .find(|r| r.span.span_id == stop.span.parent_span_id)
        .unwrap_or_else(|| panic!("the stop's parent is exported: {spans_of_trace:#?}"));
    assert!(
        parent.span.name == "tasks/cancel" || parent.span.name == "mcp.handler",
        "{parent:#?}"
    );
}

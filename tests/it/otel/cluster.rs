//! Trace context across replicas (two `stateless-mcp` processes sharing a real
//! `redis-server` bus and task store): a `tasks/cancel` on one replica and the handler it
//! stops on the other are one trace; so are a legacy client's elicitation answer received on
//! one replica and its delivery to the `tools/call` on the other.

use serde_json::json;

use super::receiver::{Receiver, hex};
use super::{CALLER, TRACE};
use crate::support::Client;
use crate::support::cluster::{Cluster, ClusterOptions, metric};
use crate::support::legacy::LegacyClient;
use crate::tasks::{create, task_meta};

/// Two replicas exporting to `receiver`.
async fn cluster(receiver: &Receiver) -> Cluster {
    Cluster::start(ClusterOptions {
        replicas: 2,
        envs: vec![
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
                receiver.endpoint.clone(),
            ),
            ("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()),
        ],
        ..ClusterOptions::default()
    })
    .await
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

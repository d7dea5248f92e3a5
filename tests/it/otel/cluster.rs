//! Trace context across replicas (two `stateless-mcp` processes sharing a real
//! `redis-server` bus and task store): a `tasks/cancel` on one replica and the handler it
//! stops on the other are one trace.

use serde_json::json;

use super::receiver::{Receiver, hex};
use super::{CALLER, TRACE};
use crate::support::Client;
use crate::support::cluster::{Cluster, ClusterOptions, metric};
use crate::tasks::{create, task_meta};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_one_replica_and_the_stop_on_the_other_are_one_trace() {
    let receiver = Receiver::start().await;
    let c = Cluster::start(ClusterOptions {
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
    .await;
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

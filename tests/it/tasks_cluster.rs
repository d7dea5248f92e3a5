//! Tasks across replicas: three `stateless-mcp` processes sharing a real `redis-server` (task
//! store and bus). A task created on one replica is followed, cancelled and answered on the
//! others; the tasks of a replica killed with SIGKILL fail once its lease lapses; a Redis
//! restart is an error while it lasts, never a crash or a stuck task.

use std::time::{Duration, Instant};

use serde_json::json;

use super::tasks::{create, get, task_request, until};
use crate::support::Client;
use crate::support::cluster::{Cluster, ClusterOptions, metric};

/// The lease of the replicas here, in seconds.
const LEASE_SECS: u64 = 2;

async fn cluster() -> Cluster {
    Cluster::start(ClusterOptions {
        extra_args: vec!["--task-lease-secs".into(), LEASE_SECS.to_string()],
        ..ClusterOptions::default()
    })
    .await
}

fn clients(c: &Cluster) -> Vec<Client> {
    c.replicas.iter().map(|r| Client::new(&r.url)).collect()
}

async fn until_metric(c: &Cluster, replica: &str, name: &str, value: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric(c.replica(replica), name).await != value {
        assert!(
            Instant::now() < deadline,
            "{name} on {replica} did not become {value}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_replica_follows_cancels_and_answers_a_task() {
    let c = cluster().await;
    let r = clients(&c);
    // Created on r1, followed on r2 and r3.
    let id = create(&r[0], "slow_compute", json!({"seconds": 0.5, "label": "x"})).await;
    assert_eq!(
        get(&r[1], &id).await["status"],
        "working",
        "stored before the reply"
    );
    let done = until(&r[2], &id, "completed", Duration::from_secs(10)).await;
    assert_eq!(done["result"]["content"][0]["text"], "Computed x in 0.5 s");

    // Cancelled on r2 while r1 runs it: r1's handler stops.
    let id = create(&r[0], "slow_compute", json!({"seconds": 60})).await;
    until_metric(&c, "r1", "mcp_tasks_running", 1.0).await;
    let ack = task_request(&r[1], "tasks/cancel", &id, json!({})).await;
    assert_eq!(ack.result()["resultType"], "complete");
    until_metric(&c, "r1", "mcp_tasks_running", 0.0).await;
    assert_eq!(get(&r[2], &id).await["status"], "cancelled");

    // Answered on the others: one key on r3, the other on r2, which resumes it.
    let id = create(&r[0], "multi_input", json!({})).await;
    let asking = until(&r[1], &id, "input_required", Duration::from_secs(5)).await;
    assert_eq!(
        asking["inputRequests"].as_object().unwrap().len(),
        2,
        "{asking}"
    );
    let answer = |key: &str, content| json!({"inputResponses": {key: {"action": "accept", "content": content}}});
    task_request(
        &r[2],
        "tasks/update",
        &id,
        answer("name", json!({"name": "Ada"})),
    )
    .await;
    let half = get(&r[0], &id).await;
    assert_eq!(half["status"], "input_required");
    assert!(half["inputRequests"].get("name").is_none());
    assert!(half["inputRequests"].get("color").is_some());
    task_request(
        &r[1],
        "tasks/update",
        &id,
        answer("color", json!({"color": "teal"})),
    )
    .await;
    let done = until(&r[0], &id, "completed", Duration::from_secs(10)).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "name: Ada, color: teal"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tasks_of_a_killed_replica_fail_within_its_lease() {
    let c = cluster().await;
    let r = clients(&c);
    let id = create(&r[0], "slow_compute", json!({"seconds": 60})).await;
    let waiting = create(&r[0], "confirm_delete", json!({"filename": "f"})).await;
    until(&r[1], &waiting, "input_required", Duration::from_secs(5)).await;
    c.replica("r1").signal("KILL");
    let killed = Instant::now();
    let failed = until(&r[1], &id, "failed", Duration::from_secs(LEASE_SECS + 10)).await;
    let took = killed.elapsed();
    assert!(
        took < Duration::from_secs(LEASE_SECS + 3),
        "failed {took:?} after the kill"
    );
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed.get("result").is_none());
    assert_eq!(
        get(&r[2], &id).await["status"],
        "failed",
        "on every replica"
    );
    // A task waiting for input held no lease: it waits on, and r3 runs it when answered.
    task_request(
        &r[2],
        "tasks/update",
        &waiting,
        json!({"inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    let done = until(&r[1], &waiting, "completed", Duration::from_secs(10)).await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted f");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_is_an_error_while_it_lasts() {
    let mut c = cluster().await;
    let r = clients(&c);
    let before = create(&r[0], "slow_compute", json!({"seconds": 60})).await;
    c.redis.kill();
    let e = task_request(&r[1], "tasks/get", &before, json!({})).await;
    assert_eq!(
        e.error_code(),
        -32603,
        "unreachable is not unknown: {}",
        e.body
    );
    assert_eq!(e.status, 503, "{}", e.body);
    assert_eq!(e.response()["error"]["data"]["reason"], "store_unavailable");
    let e = r[2]
        .request(
            "tools/call",
            json!(1),
            json!({"name": "slow_compute", "arguments": {"seconds": 1},
                   "_meta": super::tasks::task_meta()}),
        )
        .await;
    assert_eq!(e.error_code(), -32603, "{}", e.body);
    assert_eq!(e.status, 503, "one answer for the same cause: {}", e.body);
    assert_eq!(e.response()["error"]["data"]["reason"], "store_unavailable");
    c.redis.restart();
    // Back: new tasks work on every replica, and cancel reaches their owner again.
    let deadline = Instant::now() + Duration::from_secs(15);
    let id = loop {
        let e = r[2]
            .request(
                "tools/call",
                json!(2),
                json!({"name": "slow_compute", "arguments": {"seconds": 60},
                       "_meta": super::tasks::task_meta()}),
            )
            .await;
        if let Some(id) = e.response()["result"]["taskId"].as_str() {
            break id.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no task after the restart: {}",
            e.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // The Redis kept nothing on disk, so the earlier task is gone with it, on every replica
    // once its store's breaker has closed again (a probe every 500 ms; until then the
    // retryable 503).
    for client in &r {
        let deadline = Instant::now() + Duration::from_secs(10);
        let e = loop {
            let e = task_request(client, "tasks/get", &before, json!({})).await;
            if e.status != 503 || Instant::now() > deadline {
                break e;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(e.error_code(), -32602, "{}", e.body);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        task_request(&r[0], "tasks/cancel", &id, json!({})).await;
        if metric(c.replica("r3"), "mcp_tasks_running").await == 0.0 {
            break;
        }
        assert!(Instant::now() < deadline, "the handler on r3 still runs");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(get(&r[1], &id).await["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_replica_finishes_short_tasks_and_fails_the_rest() {
    let mut c = cluster().await;
    let r = clients(&c);
    let short = create(&r[0], "slow_compute", json!({"seconds": 0.3})).await;
    let long = create(&r[0], "slow_compute", json!({"seconds": 60})).await;
    c.replica("r1").signal("TERM");
    // The drain delay (1 s) lets the short task finish; the long one fails when the
    // listener closes, long before its lease would lapse.
    let done = until(&r[1], &short, "completed", Duration::from_secs(5)).await;
    assert!(done["result"]["content"].is_array());
    let failed = until(&r[1], &long, "failed", Duration::from_secs(5)).await;
    assert_eq!(failed["error"]["code"], -32603);
    assert_eq!(failed["statusMessage"], "the replica shut down");
    assert!(c.replica_mut("r1").wait().success());
}

//! Tasks across replicas, measured on the real binary with a real Redis (task store and bus).
//!
//! ```text
//! cargo build --release && cargo bench --bench task_latency -- [--cancels 200] [--kills 5] [--lease-secs 2]
//! ```
//!
//! Starts `redis-server` and two replicas (A and B) of `target/release/stateless-mcp
//! --fixtures conformance --bus redis://…` (the task store defaults to the same Redis).
//!
//! - **Cancel latency across replicas.** Creates a `slow_compute{seconds:60}` task on A,
//!   then sends `tasks/cancel` to B and polls A's `/metrics` until `mcp_tasks_running` is 0
//!   (A's handler was dropped): from writing the cancel to B until A's handler is gone (B
//!   writes `cancelled` to Redis and publishes the status change; A receives it and drops the
//!   handler). Also prints the time until B's acknowledgement alone.
//! - **Owner SIGKILL → failed.** Starts a third replica C with `--task-lease-secs`, creates a
//!   task on it, kills C with SIGKILL and polls `tasks/get` on B every 10 ms until the task
//!   is `failed`: the time from the kill. Each round uses a fresh C.
//!
//! Loopback only; needs `redis-server` on `PATH`.

#[path = "support/procs.rs"]
mod procs;

use std::time::{Duration, Instant};

use procs::{arg, redis, replica, replica_pair};
use serde_json::{Value, json};

fn body(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

async fn post(http: &reqwest::Client, port: u16, method: &str, name: &str, params: Value) -> Value {
    http.post(format!("http://localhost:{port}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body(method, params).to_string())
        .send()
        .await
        .expect("request sent")
        .json()
        .await
        .expect("a JSON answer")
}

async fn create(http: &reqwest::Client, port: u16) -> String {
    let r = post(
        http,
        port,
        "tools/call",
        "slow_compute",
        json!({"name": "slow_compute", "arguments": {"seconds": 60}}),
    )
    .await;
    r["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {r}"))
        .to_owned()
}

async fn running(http: &reqwest::Client, port: u16) -> f64 {
    let text = http
        .get(format!("http://localhost:{port}/metrics"))
        .send()
        .await
        .expect("/metrics")
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("mcp_tasks_running ")?.parse().ok())
        .unwrap_or(0.0)
}

fn report(what: &str, samples: &mut [Duration]) {
    samples.sort();
    procs::report(what, "samples", samples);
}

#[tokio::main]
async fn main() {
    let cancels: usize = arg("--cancels", 200);
    let kills: usize = arg("--kills", 5);
    let lease: u64 = arg("--lease-secs", 2);
    let http = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let redis = redis().await;
    let bus = ["--bus", redis.url.as_str()];
    let (a, b) = replica_pair(&bus).await;

    let (mut acked, mut stopped) = (Vec::new(), Vec::new());
    for _ in 0..cancels {
        let id = create(&http, a.port).await;
        assert_eq!(running(&http, a.port).await, 1.0, "A runs the task");
        let started = Instant::now();
        let ack = post(&http, b.port, "tasks/cancel", &id, json!({"taskId": id})).await;
        acked.push(started.elapsed());
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        while running(&http, a.port).await != 0.0 {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "A's handler still runs"
            );
        }
        stopped.push(started.elapsed());
    }
    report("tasks/cancel on B, acknowledged", &mut acked);
    report("tasks/cancel on B -> handler on A stopped", &mut stopped);

    let mut failed = Vec::new();
    for _ in 0..kills {
        let lease_arg = lease.to_string();
        let c = replica(
            &[
                &bus[..],
                &["--replica-id", "C", "--task-lease-secs", &lease_arg],
            ]
            .concat(),
        )
        .await;
        let id = create(&http, c.port).await;
        // Let the lease be renewed at least once, as a task that ran a while would be.
        tokio::time::sleep(Duration::from_millis(lease * 1000 / 2)).await;
        let status = std::process::Command::new("kill")
            .args(["-KILL", &c.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let killed = Instant::now();
        loop {
            let r = post(&http, b.port, "tasks/get", &id, json!({"taskId": id})).await;
            if r["result"]["status"] == "failed" {
                break;
            }
            assert!(killed.elapsed() < Duration::from_secs(lease + 30), "{r}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        failed.push(killed.elapsed());
        drop(c);
    }
    report(
        &format!("owner SIGKILL -> failed on B (lease {lease} s)"),
        &mut failed,
    );
}

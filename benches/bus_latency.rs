//! Notification latency across replicas, measured on the real binary with a real Redis bus.
//!
//! ```text
//! cargo build --release --features reference-server && cargo bench --bench bus_latency -- [--events 2000] [--warmup 100]
//! ```
//!
//! Starts `redis-server` and two replicas of `target/release/stateless-mcp --fixtures
//! conformance --bus redis://…` (A and B). Opens a `subscriptions/listen` stream on B
//! subscribed to `test://watched-resource`, then, one at a time, calls
//! `test_trigger_resource_update` on A and waits for the `notifications/resources/updated`
//! on B's stream. Latency: from writing the call to A until the event's line is read from
//! B's stream (A handles the call, publishes to Redis, Redis delivers to B, B writes it on the
//! stream). For comparison it then measures the same on one replica with the in-process
//! bus (`--bus memory`: call and stream on the same replica). Prints p50/p90/p99/max.
//! Loopback only; needs `redis-server` on `PATH`.

#[path = "support/procs.rs"]
mod procs;

use std::time::{Duration, Instant};

use procs::{Caller, Rounds, listen, redis, replica, replica_pair, report, wait_for};

const WATCH: &str = r#"{"resourceSubscriptions":["test://watched-resource"]}"#;

/// Timed round trips: call on `from`, event on the stream of `to`.
async fn measure(from: u16, to: u16, rounds: Rounds) -> Vec<Duration> {
    let mut stream = listen(to, 1, WATCH).await;
    let mut caller = Caller::connect(from).await;
    rounds
        .measure(async |_| {
            let started = Instant::now();
            caller.send("test_trigger_resource_update").await;
            wait_for(&mut stream, "notifications/resources/updated").await;
            let took = started.elapsed();
            caller.answer().await;
            took
        })
        .await
}

#[tokio::main]
async fn main() {
    let rounds = Rounds::from_args("--events", 2000, 100);

    let redis = redis().await;
    let (a, b) = replica_pair(&["--bus", redis.url.as_str()]).await;
    let cross = measure(a.port, b.port, rounds).await;
    report("redis bus, call on A -> event on B", "events", &cross);
    let same = measure(b.port, b.port, rounds).await;
    report("redis bus, call on B -> event on B", "events", &same);
    drop((a, b, redis));

    let solo = replica(&["--bus", "memory"]).await;
    let local = measure(solo.port, solo.port, rounds).await;
    report(
        "memory bus, call and event on one replica",
        "events",
        &local,
    );
}

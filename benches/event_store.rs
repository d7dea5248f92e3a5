//! The cost of the event store per event: what a resumable 2025-11-25 stream pays for each
//! event it sends (one `append`), in the memory store and in Redis.
//!
//! ```text
//! cargo bench --features redis --bench event_store -- [--events 20000] [--payload 200] [--only memory|redis]
//! ```
//!
//! Appends `--events` events of `--payload` bytes (a typical notification is 60–300 bytes),
//! one at a time as a stream does, spread over 100 streams of one session (each stream keeps
//! its default bound of 128 events, so the oldest are dropped as a long stream's are), then
//! reads one whole stream back with `after` (what a resume does). Prints the time per append
//! (p50/p90/p99 for Redis, a round trip to a real `redis-server` started on a loopback port)
//! and per read.
//!
//! Instructions per append (this process only, not `redis-server`): run it under
//! `valgrind --tool=callgrind` twice with different `--events` and divide the difference of
//! the totals by the difference of the counts, e.g.
//! `valgrind --tool=callgrind target/release/deps/event_store-* --only memory --events 1000`
//! and `--events 11000`.

#[path = "support/procs.rs"]
mod procs;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use procs::{arg, redis, report};
use stateless_mcp::backends::{EventLimits, MemoryEventStore, RedisEventStore};
use stateless_mcp::extend::EventStore;

const STREAMS: usize = 100;

async fn measure(what: &str, store: Arc<dyn EventStore>, events: usize, payload: &Bytes) {
    let mut samples = Vec::with_capacity(events);
    let names: Vec<String> = (0..STREAMS).map(|i| format!("bench-stream-{i}")).collect();
    let started = Instant::now();
    for i in 0..events {
        let t = Instant::now();
        store
            .append("bench-session", &names[i % STREAMS], payload.clone(), false)
            .await
            .expect("append");
        samples.push(t.elapsed());
    }
    let total = started.elapsed();
    samples.sort();
    report(&format!("{what} append"), "events", &samples);
    println!(
        "{what} append: {:.0} ns per event over {events} events",
        total.as_nanos() as f64 / events as f64
    );
    let t = Instant::now();
    let read = store
        .after("bench-session", &names[0], 0)
        .await
        .expect("after")
        .expect("the stream exists");
    println!(
        "{what} after: {} events read back in {:.2?}",
        read.len(),
        t.elapsed()
    );
}

#[tokio::main]
async fn main() {
    let events: usize = arg("--events", 20_000);
    let payload = Bytes::from(vec![b'x'; arg("--payload", 200usize)]);
    let only: String = arg("--only", String::new());
    assert!(events > 0, "--events must be at least 1");
    if only.is_empty() || only == "memory" {
        let store = Arc::new(MemoryEventStore::default());
        measure("memory", store, events, &payload).await;
    }
    if only.is_empty() || only == "redis" {
        let server = redis().await;
        let store = RedisEventStore::connect(&server.url, "bench", EventLimits::default())
            .expect("connect to redis-server");
        measure("redis", Arc::new(store), events, &payload).await;
        // Let the connection close before the server goes.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

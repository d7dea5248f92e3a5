//! What an open `subscriptions/listen` stream costs, measured on the real binary.
//!
//! ```text
//! cargo build --release && cargo bench --bench listen_streams -- [--streams 10000] [--redis]
//! ```
//!
//! Starts `target/release/stateless-mcp --fixtures conformance`, reads its resident memory,
//! opens N listen streams over N TCP connections (waiting for each acknowledgement), reads
//! the memory again and prints the difference per stream. Then one `tools/call` of
//! `test_trigger_tool_change` publishes an event, and it prints how long until every stream
//! has received its `tools/list_changed` notification. Loopback only; bounded by N.
//!
//! With `--redis` it also starts `redis-server` and runs the measured replica with
//! `--bus redis://…`; the event is then published by a second replica on the same bus, so
//! the time includes the hop through Redis (call on the publisher → last stream on the
//! measured replica has the event).

#[path = "support/procs.rs"]
mod procs;

use std::time::{Duration, Instant};

use procs::{Caller, arg, flag, listen, redis, replica, rss_kib, wait_for};

#[tokio::main]
async fn main() {
    let streams: usize = arg("--streams", 10_000);
    let with_redis = flag("--redis");
    let max = (streams + 10).to_string();
    let redis = if with_redis {
        Some(redis().await)
    } else {
        None
    };
    let mut args = vec!["--max-listen-streams", max.as_str()];
    if let Some(r) = &redis {
        args.extend(["--bus", r.url.as_str()]);
    }
    let measured = replica(&args).await;
    let publisher = match &redis {
        Some(r) => Some(replica(&["--bus", r.url.as_str()]).await),
        None => None,
    };
    let port = measured.port;
    let pid = measured.pid();
    println!(
        "bus: {}",
        if with_redis {
            "redis (event published by a second replica)"
        } else {
            "memory (in-process)"
        }
    );

    // Warm up: a few streams open and closed, so lazily allocated pools exist already.
    for i in 0..50 {
        drop(listen(port, i, r#"{"toolsListChanged":true}"#).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(pid);
    let started = Instant::now();
    let mut open = Vec::with_capacity(streams);
    for batch in (0..streams).collect::<Vec<_>>().chunks(250) {
        let opened = futures_util::future::join_all(
            batch
                .iter()
                .map(|&i| listen(port, 1000 + i, r#"{"toolsListChanged":true}"#)),
        )
        .await;
        open.extend(opened);
    }
    let open_time = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib(pid);
    let per_stream = (after.saturating_sub(before) as f64 * 1024.0) / streams as f64;
    println!("streams open:            {streams} (in {open_time:.2?})");
    println!("server RSS before/after: {before} KiB / {after} KiB");
    println!(
        "memory per open stream:  {per_stream:.0} bytes ({:.2} KiB)",
        per_stream / 1024.0
    );

    // Fan-out: one event, every stream.
    let mut caller = Caller::connect(publisher.as_ref().map_or(port, |p| p.port)).await;
    let started = Instant::now();
    caller.send("test_trigger_tool_change").await;
    let waits = open.iter_mut().map(|r| wait_for(r, "tools/list_changed"));
    futures_util::future::join_all(waits).await;
    println!("one event to all streams: {:.2?}", started.elapsed());
    caller.answer().await;
    drop(open);
}

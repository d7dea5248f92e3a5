//! Idempotent tool calls across replicas: three `stateless-mcp` processes sharing a real
//! `redis-server` (the idempotency store defaults to the bus's Redis) behind nginx. The demo
//! `increment` tool counts per process, so which replica ran it, and how often, shows in the
//! counters afterwards.
//!
//! It also counts the Redis commands each kind of request costs (`INFO commandstats`): a
//! plain 2026-07-28 call, none; a call with a new key, two (claim and complete, one `EVAL`
//! each); a retry, one.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::cluster::{Cluster, ClusterOptions, replica_of};
use crate::support::redis_commands::{command_counts, delta};
use crate::support::{Client, Exchange, request_parts};

async fn increment(c: &Client, id: i64, args: Value, key: Option<&str>) -> Exchange {
    let (mut headers, body) = request_parts(
        "tools/call",
        json!(id),
        json!({"name": "increment", "arguments": args}),
    );
    if let Some(k) = key {
        headers.push(("idempotency-key".into(), k.into()));
    }
    c.send(headers, body, Some("tools/call")).await
}

fn value(x: &Exchange) -> u64 {
    assert_eq!(x.status, 200, "{}", x.body);
    x.result()["content"][0]["text"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no counter value in {}", x.body))
}

/// Each replica's counter, moved by one call without a key (so: what it was, plus one).
async fn counters_plus_one(c: &Cluster) -> Vec<u64> {
    let mut out = Vec::new();
    for (i, r) in c.replicas.iter().enumerate() {
        let x = increment(&Client::new(&r.url), 1000 + i as i64, json!({}), None).await;
        out.push(value(&x));
    }
    out
}

/// The commands the server sent itself: all but those the idempotency scripts run inside
/// an `EVAL`.
fn sent(delta: &BTreeMap<String, u64>) -> u64 {
    delta
        .iter()
        .filter(|(name, _)| {
            !["hget", "hmget", "hset", "hexists", "pexpire", "del"].contains(&name.as_str())
        })
        .map(|(_, n)| n)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_runs_the_handler_once_across_replicas() {
    let c = Cluster::start(ClusterOptions::default()).await;
    let lb = Client::new(&c.nginx.url);

    // 100 concurrent retries of one key through the load balancer: one run, one value.
    let calls = (0..100).map(|i| {
        let lb = lb.clone();
        async move {
            let x = increment(&lb, i, json!({}), Some("order-100")).await;
            (value(&x), replica_of(&x.headers))
        }
    });
    let answers = futures_util::future::join_all(calls).await;
    let replicas: std::collections::BTreeSet<&str> =
        answers.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(
        replicas.len(),
        3,
        "every replica answered some: {replicas:?}"
    );
    assert!(answers.iter().all(|(v, _)| *v == 1), "{answers:?}");
    // Exactly one replica's counter moved, once.
    let mut counters = counters_plus_one(&c).await;
    counters.sort_unstable();
    assert_eq!(counters, [1, 1, 2]);

    // A retry on another replica returns the first result, and runs nothing there.
    let r: Vec<Client> = c.replicas.iter().map(|r| Client::new(&r.url)).collect();
    let first = value(&increment(&r[0], 1, json!({}), Some("order-2")).await);
    assert_eq!(
        value(&increment(&r[1], 2, json!({}), Some("order-2")).await),
        first
    );
    assert_eq!(
        value(&increment(&r[2], 3, json!({}), Some("order-2")).await),
        first
    );
    // The counters were [1, 1, 2] in some order; r1 ran `order-2` once, and each runs one
    // call without a key now: r2 and r3 did not run it.
    let moved = counters_plus_one(&c).await;
    assert_eq!(moved.iter().sum::<u64>(), 1 + 1 + 2 + 1 + 3);

    // Other arguments with the same key are refused, on any replica.
    for (i, client) in r.iter().enumerate() {
        let other = increment(client, 10 + i as i64, json!({"by": 2}), Some("order-2")).await;
        assert_eq!(other.status, 422, "{}", other.body);
        assert_eq!(other.error_code(), -32602);
    }

    // Without a key, a new value each call.
    let a = value(&increment(&r[0], 20, json!({}), None).await);
    let b = value(&increment(&r[0], 21, json!({}), None).await);
    assert_eq!(b, a + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_commands_per_request() {
    let c = Cluster::start(ClusterOptions::default()).await;
    let r1 = Client::new(&c.replicas[0].url);
    // Warm up every connection first (the lazy Redis connections are made on first use).
    value(&increment(&r1, 1, json!({}), Some("warm")).await);

    let before = command_counts(&c.redis.url()).await;
    for i in 0..50 {
        let echo = r1
            .request(
                "tools/call",
                json!(i),
                json!({"name": "echo", "arguments": {"text": "hi"}}),
            )
            .await;
        assert_eq!(echo.status, 200);
        value(&increment(&r1, 100 + i, json!({}), None).await);
    }
    let plain = delta(&before, &command_counts(&c.redis.url()).await);
    assert!(
        plain.is_empty(),
        "plain 2026 calls ran Redis commands: {plain:?}"
    );

    let before = command_counts(&c.redis.url()).await;
    for i in 0..10 {
        value(&increment(&r1, 200 + i, json!({}), Some(&format!("new-{i}"))).await);
    }
    // `INFO commandstats` counts the commands the scripts run too (`HMGET`, `HSET`, …);
    // what the server sends is the `EVAL`s.
    let keyed = delta(&before, &command_counts(&c.redis.url()).await);
    assert_eq!(keyed.get("eval"), Some(&20), "new keys: {keyed:?}");
    assert_eq!(sent(&keyed), 20, "new keys: {keyed:?}");

    let before = command_counts(&c.redis.url()).await;
    for i in 0..10 {
        value(&increment(&r1, 300 + i, json!({}), Some(&format!("new-{i}"))).await);
    }
    let retried = delta(&before, &command_counts(&c.redis.url()).await);
    assert_eq!(retried.get("eval"), Some(&10), "retries: {retried:?}");
    assert_eq!(sent(&retried), 10, "retries: {retried:?}");
}

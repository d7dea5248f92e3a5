//! When the shared store is down: two replicas of the binary sharing one real
//! `redis-server` (bus, session, task, replay and idempotency stores), which is frozen
//! (SIGSTOP), thawed, killed and started again on the same port, with the replicas left
//! running throughout.
//!
//! While Redis cannot answer: a plain 2026-07-28 `tools/call` (no shared state) succeeds on
//! every replica; a legacy (2025-11-25) session request and a task-augmented call each get
//! the one store-unavailable answer (503, `Retry-After: 1`, `data.reason =
//! "store_unavailable"`), once the settings a replica read before the outage (kept at most
//! a second) are out of date; once a store's circuit breaker is open, its requests are refused
//! without a network wait (the `cause="breaker_open"` count grows with each). When Redis
//! answers again, everything works again without a restart. Latencies are printed (speed is
//! reported, not asserted; `--nocapture` shows them). Over stdio, the same JSON-RPC error.

use std::time::{Duration, Instant};

use serde_json::json;

use super::tasks::task_meta;
use crate::support::cluster::{Cluster, ClusterOptions};
use crate::support::legacy::LegacyClient;
use crate::support::process::ServerProcess;
use crate::support::{Client, Exchange};

/// How long a replica keeps a session's settings at most (`legacy::settings_cache`), and a
/// margin.
const SETTINGS_TTL: Duration = Duration::from_millis(1_100);

/// Prints one line of the narrative.
macro_rules! say {
    ($($t:tt)*) => { println!("[store-outage] {}", format!($($t)*)) };
}

/// The sum of the series of counter `name` in `r`'s `/metrics` whose labels include every
/// one of `labels`.
async fn labelled(r: &ServerProcess, name: &str, labels: &[(&str, &str)]) -> f64 {
    let text = crate::support::get(format!("{}/metrics", r.base))
        .await
        .expect("/metrics answers")
        .text()
        .await
        .unwrap();
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix('{')?;
            let (set, value) = rest.split_once("} ")?;
            labels
                .iter()
                .all(|(k, v)| set.split(',').any(|kv| kv == format!("{k}=\"{v}\"")))
                .then(|| value.trim().parse::<f64>().ok())
                .flatten()
        })
        .sum()
}

/// How many calls to `store` on `r` were refused at once by its open breaker.
async fn refused_at_once(r: &ServerProcess, store: &str) -> f64 {
    labelled(
        r,
        "mcp_store_unavailable_total",
        &[("store", store), ("cause", "breaker_open")],
    )
    .await
}

/// Asserts the one store-unavailable answer.
fn assert_store_unavailable(x: &Exchange, what: &str) {
    assert_eq!(x.status, 503, "{what}: {}", x.body);
    assert_eq!(
        x.headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("1"),
        "{what}: Retry-After"
    );
    let r = x.response();
    assert_eq!(r["error"]["code"], -32603, "{what}: {r}");
    assert_eq!(
        r["error"]["data"]["reason"], "store_unavailable",
        "{what}: {r}"
    );
    assert_eq!(r["error"]["data"]["retryAfterSecs"], 1, "{what}: {r}");
}

/// A plain 2026 `tools/call` (no shared state): asserts it succeeds.
async fn plain_call(client: &Client, what: &str) -> Duration {
    let t = Instant::now();
    let x = client
        .request(
            "tools/call",
            json!(7),
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        )
        .await;
    let took = t.elapsed();
    assert_eq!(x.status, 200, "{what}: {}", x.body);
    assert_eq!(x.result()["content"][0]["text"], "still here", "{what}");
    took
}

/// A legacy session request (`tools/list`, which loads the session from the store).
async fn session_request(session: &LegacyClient) -> (Exchange, Duration) {
    let t = Instant::now();
    let x = session.request(json!(3), "tools/list", json!({})).await;
    (x, t.elapsed())
}

/// A task-augmented call (creates a task in the store).
async fn task_call(client: &Client) -> (Exchange, Duration) {
    let t = Instant::now();
    let x = client
        .request(
            "tools/call",
            json!(5),
            json!({"name": "slow_compute", "arguments": {"seconds": 0.1},
                   "_meta": task_meta()}),
        )
        .await;
    (x, t.elapsed())
}

/// Polls until a session request and a task call succeed on `r` again (the stores
/// recovered, no restart).
async fn until_recovered(session: &LegacyClient, tasks: &Client, what: &str) -> Duration {
    let t = Instant::now();
    let deadline = t + Duration::from_secs(20);
    loop {
        let (s, _) = session_request(session).await;
        let (c, _) = task_call(tasks).await;
        if s.status == 200 && c.status == 200 {
            assert!(s.result()["tools"].is_array(), "{}", s.body);
            assert_eq!(c.result()["resultType"], "task", "{}", c.body);
            return t.elapsed();
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not recovered within 20 s: {} / {}",
            s.body,
            c.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Requests that need the store fail (503) and, once the breakers are open, fail at once;
/// plain calls keep working on every replica.
async fn while_down(c: &Cluster, session: &LegacyClient, clients: &[Client], how: &str) {
    // A replica serves a session's settings it read less than a second ago without asking
    // the store (on a shared bus, until a change is announced): past that, every session
    // request needs the store.
    tokio::time::sleep(SETTINGS_TTL).await;
    for (i, client) in clients.iter().enumerate() {
        let took = plain_call(client, how).await;
        say!(
            "{how}: plain 2026 tools/call on r{} answered 200 in {took:?}",
            i + 1
        );
    }
    // The first requests find out (a timeout, a lost or refused connection) and open the
    // breakers of the session store on r1 and the task store on r2.
    let (x, first_session) = session_request(session).await;
    assert_store_unavailable(&x, "a session request");
    let (x, first_task) = task_call(&clients[1]).await;
    assert_store_unavailable(&x, "a task-augmented call");
    say!(
        "{how}: first session request 503 in {first_session:?}, first task call 503 in {first_task:?}"
    );
    // Now the breakers are open: the next ones are refused without asking Redis.
    let (r1, r2) = (c.replica("r1"), c.replica("r2"));
    for n in 0..3 {
        let (s0, t0) = (
            refused_at_once(r1, "sessions").await,
            refused_at_once(r2, "tasks").await,
        );
        let (x, session_took) = session_request(session).await;
        assert_store_unavailable(&x, "a session request, breaker open");
        let (x, task_took) = task_call(&clients[1]).await;
        assert_store_unavailable(&x, "a task call, breaker open");
        let (s1, t1) = (
            refused_at_once(r1, "sessions").await,
            refused_at_once(r2, "tasks").await,
        );
        assert!(
            s1 > s0,
            "the session request was not refused by the open breaker ({s0} -> {s1})"
        );
        assert!(
            t1 > t0,
            "the task call was not refused by the open breaker ({t0} -> {t1})"
        );
        say!(
            "{how}: breaker open (#{n}): session request 503 in {session_took:?}, task call 503 in {task_took:?}"
        );
    }
    for client in clients {
        plain_call(client, how).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outage_fails_fast_and_recovers_without_a_restart() {
    let mut c = Cluster::start(ClusterOptions {
        replicas: 2,
        ..ClusterOptions::default()
    })
    .await;
    let clients: Vec<Client> = c.replicas.iter().map(|r| Client::new(&r.url)).collect();
    let session = LegacyClient::connect(&c.replica("r1").url, json!({})).await;
    // Healthy: everything answers.
    let (x, healthy) = session_request(&session).await;
    assert_eq!(x.status, 200, "{}", x.body);
    let (x, _) = task_call(&clients[1]).await;
    assert_eq!(x.status, 200, "{}", x.body);
    say!("healthy: session request in {healthy:?}");

    c.redis.pause();
    say!("redis-server paused (SIGSTOP)");
    while_down(&c, &session, &clients, "paused").await;

    c.redis.resume();
    let took = until_recovered(&session, &clients[1], "after SIGCONT").await;
    say!("redis-server resumed (SIGCONT): recovered in {took:?}, replicas untouched");

    c.redis.kill();
    say!("redis-server killed (SIGKILL)");
    while_down(&c, &session, &clients, "killed").await;

    c.redis.restart();
    let took = until_recovered(&session, &clients[1], "after a new redis-server").await;
    say!("a new redis-server on the same port: recovered in {took:?}");
    // Nothing of the old Redis survived (no persistence): the session's settings start
    // empty again, the session itself lives on in its sealed id.
}

/// Over stdio the same JSON-RPC error (no HTTP status there): a task store that cannot be
/// reached refuses a task-augmented call with `store_unavailable`, twice (the second time at
/// once, the breaker open), while a plain call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_store_outage_is_the_same_json_rpc_error() {
    // Nothing listens there: every connection is refused.
    let nowhere = format!("redis://127.0.0.1:{}", crate::support::brokers::free_port());
    let mut c = crate::support::stdio::StdioClient::spawn(&[
        "--fixtures",
        "conformance",
        "--task-store",
        &nowhere,
    ]);
    for id in [1, 2] {
        c.request(
            json!(id),
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0.1},
                   "_meta": task_meta()}),
        )
        .await;
        let (_, r) = c.until_response(&json!(id)).await;
        assert_eq!(r["error"]["code"], -32603, "{r}");
        assert_eq!(r["error"]["data"]["reason"], "store_unavailable", "{r}");
        assert_eq!(r["error"]["data"]["retryAfterSecs"], 1, "{r}");
    }
    c.request(
        json!(3),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    )
    .await;
    let (_, r) = c.until_response(&json!(3)).await;
    assert_eq!(r["result"]["content"][0]["text"], "still here", "{r}");
}

//! How often each kind of request touches the shared Redis: three replicas of the reference
//! binary with every store (tasks, legacy sessions, single-use states, idempotency, events)
//! and the bus on one real `redis-server`, and Redis's own log of what they sent.
//!
//! # How round trips are counted
//!
//! A round trip is one command a replica sends (the server pipelines nothing). Redis's
//! `MONITOR` prints every command with the address of the client that sent it, and the
//! commands a Lua script runs inside an `EVAL` with `lua` instead, so those are left out:
//! a task write is one `EVAL` however many `HSET`s it runs (`INFO commandstats` counts both,
//! so it cannot tell them apart). The same goes for a task status change's `PUBLISH`, which
//! the task store on the bus's Redis runs inside its write: it is counted as an
//! announcement, not as a round trip. [`CommandLog::take`] returns the slice sent since the
//! previous one, closed by a marker of its own. Left out as well, because they run on a
//! timer whatever the requests: the bus's heartbeat (`PING` every 5 s per replica) and the
//! lapsed-lease sweeper (an `EVAL` of the script that runs `ZRANGEBYSCORE`, every 5 s per
//! replica with any lease of 20 s or more; the test sets 120 s). Store round trips and the bus's `PUBLISH`es are
//! counted apart: with `--bus nats://…` the latter are not Redis's at all. Announcements
//! are every `PUBLISH`, sent or run by a script.
//!
//! A task-augmented call is counted with everything it causes until its task is terminal
//! (creation, and the write and announcement of its outcome), as the tool here ends at once.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::tasks::{create, get, task_request};
use crate::support::Client;
use crate::support::cluster::{Cluster, ClusterOptions};
use crate::support::legacy::LegacyClient;
use crate::support::redis_commands::{CommandLog, Sent};

/// Requests of each kind.
const N: usize = 12;

/// Round trips per command name, less the timer-driven ones and the commands scripts ran
/// (see the module docs).
fn round_trips(sent: &[Sent]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for s in sent {
        let timer = s.name == "PING" || (s.name == "EVAL" && s.line.contains("ZRANGEBYSCORE"));
        if !timer && !s.by_script {
            *out.entry(s.name.clone()).or_insert(0) += 1;
        }
    }
    out
}

/// Store round trips (everything but `PUBLISH`) and bus publishes in `counts`.
fn split(counts: &BTreeMap<String, usize>) -> (usize, usize) {
    let bus = counts.get("PUBLISH").copied().unwrap_or(0);
    (counts.values().sum::<usize>() - bus, bus)
}

/// Per request, to two decimals.
fn per(n: usize, requests: usize) -> f64 {
    (n as f64 / requests as f64 * 100.0).round() / 100.0
}

macro_rules! say {
    ($($t:tt)*) => { eprintln!("[redis_round_trips] {}", format!($($t)*)) };
}

/// Announcements (`PUBLISH`es, sent by a client or run by a script) in `sent`.
fn announcements(sent: &[Sent]) -> usize {
    sent.iter().filter(|s| s.name == "PUBLISH").count()
}

/// Store round trips, bus publishes (round trips of their own) and announcements per
/// request in `sent`, printed for `kind`.
fn tally(sent: &[Sent], kind: &str, requests: usize) -> (f64, f64, f64) {
    let counts = round_trips(sent);
    let (store, bus) = split(&counts);
    let (store, bus) = (per(store, requests), per(bus, requests));
    let announced = per(announcements(sent), requests);
    say!(
        "{kind}: {store} store round trips, {bus} bus publishes and {announced} announcements \
         per request ({requests} requests: {counts:?})"
    );
    (store, bus, announced)
}

/// Takes the log's slice for one kind of request, prints it, and answers the store round
/// trips and bus publishes per request (and the announcements, [`tally`]).
async fn measured(log: &mut CommandLog, kind: &str, requests: usize) -> (f64, f64, f64) {
    tally(&log.take().await, kind, requests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_per_request_kind() {
    let c = Cluster::start(ClusterOptions {
        // A lease renewal (every third of the lease) would fall into a measured slice;
        // with a 120 s lease none comes during the test.
        extra_args: vec![
            "--session-idle-secs".into(),
            "2".into(),
            "--task-lease-secs".into(),
            "120".into(),
        ],
        ..ClusterOptions::default()
    })
    .await;
    let r: Vec<Client> = c.replicas.iter().map(|r| Client::new(&r.url)).collect();
    let echo = |i: usize| json!({"name": "echo", "arguments": {"text": format!("hi {i}")}});

    // Every replica makes its lazy connections first (each one's handshake is a command).
    let session = LegacyClient::connect(&c.replicas[0].url, json!({})).await;
    for (i, client) in r.iter().enumerate() {
        let id = create(
            client,
            "slow_compute",
            json!({"seconds": 0, "label": "warm"}),
        )
        .await;
        get(&r[(i + 1) % r.len()], &id).await;
        let x = session
            .at(&c.replicas[i].url)
            .request(json!(i), "tools/call", echo(i))
            .await;
        assert_eq!(x.status, 200, "{}", x.body);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut log = CommandLog::start(&c.redis.url()).await;

    // A plain 2026-07-28 call: nothing shared to read or write.
    for i in 0..N {
        let x = r[i % r.len()]
            .request("tools/call", json!(i), echo(i))
            .await;
        assert_eq!(x.status, 200, "{}", x.body);
    }
    let plain = measured(&mut log, "plain 2026-07-28 tools/call", N).await;
    assert_eq!(plain, (0.0, 0.0, 0.0), "a plain call touches no store");

    // A task-augmented call, until its task is terminal (its outcome stored and announced).
    let mut ids = Vec::new();
    for i in 0..N {
        let label = format!("t{i}");
        ids.push(
            create(
                &r[i % r.len()],
                "slow_compute",
                json!({"seconds": 0, "label": label}),
            )
            .await,
        );
    }
    // Nothing reads the tasks meanwhile: the log is read until every outcome was announced.
    let mut sent = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while announcements(&sent) < N {
        assert!(
            tokio::time::Instant::now() < deadline,
            "tasks not settled: {sent:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        sent.extend(log.take().await);
    }
    let task_call = tally(&sent, "task-augmented tools/call", N);

    // tasks/get of a terminal task, on another replica than the one that ran it.
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(get(&r[(i + 2) % r.len()], id).await["status"], "completed");
    }
    let task_get = measured(&mut log, "tasks/get", N).await;

    // tasks/result: removed from the extension (-32601 before any store).
    for (i, id) in ids.iter().enumerate() {
        let x = task_request(&r[i % r.len()], "tasks/result", id, json!({})).await;
        assert_eq!(x.error_code(), -32601, "{}", x.body);
    }
    let task_result = measured(&mut log, "tasks/result", N).await;

    // tasks/cancel of a terminal task (the same ack, nothing written).
    for (i, id) in ids.iter().enumerate() {
        let x = task_request(&r[i % r.len()], "tasks/cancel", id, json!({})).await;
        assert_eq!(x.result()["resultType"], "complete", "{}", x.body);
    }
    let cancel_terminal = measured(&mut log, "tasks/cancel (terminal task)", N).await;

    // tasks/cancel of a running task, on another replica than the one running it.
    let running: Vec<String> = futures_util::future::join_all(
        (0..N).map(|i| create(&r[i % r.len()], "slow_compute", json!({"seconds": 60}))),
    )
    .await;
    log.take().await;
    for (i, id) in running.iter().enumerate() {
        let x = task_request(&r[(i + 1) % r.len()], "tasks/cancel", id, json!({})).await;
        assert_eq!(x.result()["resultType"], "complete", "{}", x.body);
    }
    let cancel_running = measured(&mut log, "tasks/cancel (running task)", N).await;

    // A 2025-11-25 call with sliding expiry (2 s idle limit): every 100 ms for 6 s, on the
    // three replicas in turn, so each replica sees the session every 300 ms and the last
    // use must be recorded about once a second.
    let started = std::time::Instant::now();
    let mut legacy = 0;
    while started.elapsed() < Duration::from_secs(6) {
        let x = session
            .at(&c.replicas[legacy % r.len()].url)
            .request(json!(legacy), "tools/call", echo(legacy))
            .await;
        assert_eq!(x.status, 200, "{}", x.body);
        legacy += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let legacy_call = measured(&mut log, "2025-11-25 tools/call, sliding expiry", legacy).await;

    say!(
        "store round trips per request: plain {} | task call {} | tasks/get {} | tasks/result {} | \
         tasks/cancel terminal {} | tasks/cancel running {} | legacy call {}",
        plain.0,
        task_call.0,
        task_get.0,
        task_result.0,
        cancel_terminal.0,
        cancel_running.0,
        legacy_call.0
    );
    // The task store is the bus's Redis: a status change is published within its write.
    assert_eq!(
        task_call,
        (2.0, 0.0, 1.0),
        "a task-augmented call: 2 round trips in all, its outcome announced once within the second"
    );
    assert_eq!(task_get, (1.0, 0.0, 0.0), "tasks/get");
    assert_eq!(task_result, (0.0, 0.0, 0.0), "tasks/result");
    assert_eq!(
        cancel_terminal,
        (1.0, 0.0, 0.0),
        "a terminal task's cancel reads it and announces nothing"
    );
    assert_eq!(
        cancel_running,
        (2.0, 0.0, 1.0),
        "a running task's cancel: read, and the write that announces it"
    );
    assert!(
        legacy_call.0 < 1.0,
        "a legacy call with sliding expiry: {legacy_call:?}"
    );
}

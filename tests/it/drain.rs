//! Graceful drain of the real binary: readiness off at SIGTERM, in-flight requests finish,
//! exit status 0; a shutdown deadline that in-flight work cannot stall.

use std::time::Duration;

use futures_util::future::join_all;
use serde_json::json;

use crate::support::Client;
use crate::support::process::{ServerProcess, spawn_server};

/// Polls `/metrics` until `mcp_server_requests_in_flight` reaches `n` (bounded).
async fn wait_in_flight(srv: &ServerProcess, n: usize) {
    let want = format!("mcp_server_requests_in_flight {n}");
    for _ in 0..600 {
        let text = crate::support::get(format!("{}/metrics", srv.base))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if text.lines().any(|l| l == want) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never saw {n} requests in flight");
}

async fn readyz(srv: &ServerProcess) -> (u16, serde_json::Value) {
    let r = crate::support::get(format!("{}/readyz", srv.base))
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn readiness_turns_503_while_draining_and_liveness_stays_up() {
    // A long drain delay: the listener stays open for the whole test.
    let srv = spawn_server(&["--drain-delay-secs", "600"]);
    assert_eq!(readyz(&srv).await.0, 200);
    srv.signal("TERM");
    let mut seen = None;
    for _ in 0..600 {
        let (status, body) = readyz(&srv).await;
        if status == 503 {
            seen = Some(body);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let body = seen.expect("/readyz never answered 503 after SIGTERM");
    assert_eq!(
        body,
        json!({"status": "not ready", "reasons": ["draining"]})
    );
    let live = crate::support::get(format!("{}/healthz", srv.base))
        .await
        .unwrap();
    assert_eq!(live.status(), 200);
    // Still serving MCP during the delay.
    let x = Client::new(&srv.url)
        .request(
            "tools/call",
            json!(1),
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        )
        .await;
    assert_eq!(x.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_under_load_finishes_in_flight_requests_and_exits_0() {
    const N: usize = 8;
    let mut srv = spawn_server(&["--drain-delay-secs", "0", "--shutdown-timeout-secs", "60"]);
    let client = Client::new(&srv.url);
    let calls: Vec<_> = (0..N)
        .map(|i| {
            let c = client.clone();
            tokio::spawn(async move {
                c.request(
                    "tools/call",
                    json!(i),
                    json!({"name": "sleep", "arguments": {"ms": 5000}}),
                )
                .await
            })
        })
        .collect();
    wait_in_flight(&srv, N).await;
    srv.signal("TERM");
    for (i, done) in join_all(calls).await.into_iter().enumerate() {
        let x = done.expect("the request task");
        assert_eq!(x.status, 200, "request {i}: {}", x.body);
        assert_eq!(x.response()["id"], json!(i));
        assert_eq!(x.result()["content"][0]["text"], "slept 5000 ms");
    }
    let status = tokio::task::block_in_place(|| srv.wait());
    assert_eq!(status.code(), Some(0), "{status:?}");
    let lines = srv.stderr_lines();
    assert!(
        lines.iter().any(|l| l.contains("drained; exiting")),
        "{lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shutdown_deadline_bounds_the_drain() {
    let mut srv = spawn_server(&["--drain-delay-secs", "0", "--shutdown-timeout-secs", "1"]);
    let client = Client::new(&srv.url);
    let url = srv.url.clone();
    let call = tokio::spawn(async move {
        let mut req = crate::support::http().post(url).body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": crate::support::with_meta(json!({"name": "sleep", "arguments": {"ms": 600000}}))})
            .to_string(),
        );
        for (k, v) in Client::headers("tools/call", Some("sleep")) {
            req = req.header(k, v);
        }
        req.send().await.map(|r| r.status())
    });
    drop(client);
    wait_in_flight(&srv, 1).await;
    srv.signal("TERM");
    let status = tokio::task::block_in_place(|| srv.wait());
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        call.await.unwrap().is_err(),
        "the abandoned request cannot have completed"
    );
    let lines = srv.stderr_lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("did not finish within the shutdown timeout")),
        "{lines:#?}"
    );
}

/// SIGTERM with open listen streams: each gets its graceful `SubscriptionsListenResult`
/// and ends, and the process exits 0 (the streams do not hold the drain open).
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_closes_listen_streams_gracefully_and_exits_zero() {
    use crate::support::listen::Listener;
    let mut srv = spawn_server(&[
        "--fixtures",
        "conformance",
        "--drain-delay-secs",
        "0",
        "--shutdown-timeout-secs",
        "60",
    ]);
    let client = Client::new(&srv.url);
    let mut streams = Vec::new();
    for id in ["a", "b", "c"] {
        let mut l = Listener::open(&client, json!(id), json!({"toolsListChanged": true})).await;
        assert_eq!(
            l.next_kind().await,
            "notifications/subscriptions/acknowledged"
        );
        streams.push((id, l));
    }
    srv.signal("TERM");
    for (id, l) in &mut streams {
        let last = l.next().await.expect("the graceful result");
        assert_eq!(last["id"], *id);
        assert_eq!(last["result"]["resultType"], "complete");
        assert_eq!(
            last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            *id
        );
        assert!(
            l.next().await.is_none(),
            "stream {id} ends after its result"
        );
    }
    let status = tokio::task::spawn_blocking(move || srv.wait())
        .await
        .unwrap();
    assert!(status.success(), "exit status {status:?}");
}

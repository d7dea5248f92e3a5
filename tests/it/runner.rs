//! The library's `Runner` in-process: the MCP endpoint next to the user's own routes, the
//! probes, h2c, the response header, and the drain driven by a shutdown signal of the
//! user's own (readiness 503 → listener closed → open listen streams ended gracefully →
//! `serve` returns).

use std::time::Duration;

use serde_json::json;
use stateless_mcp::{Runner, Server};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::support::listen::Listener;
use crate::support::{Client, fixtures_server};

struct Running {
    base: String,
    url: String,
    stop: CancellationToken,
    done: tokio::task::JoinHandle<Result<(), stateless_mcp::Error>>,
}

async fn run(server: Server, drain_delay: Duration) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = CancellationToken::new();
    let runner = Runner::new(server)
        .listener(listener)
        .routes(axum::Router::new().route("/hello", axum::routing::get(|| async { "hi" })))
        .response_header(
            http::HeaderName::from_static("x-served-by"),
            http::HeaderValue::from_static("runner-test"),
        )
        .drain_delay(drain_delay)
        .shutdown_timeout(Duration::from_secs(10))
        .shutdown_signal(stop.clone().cancelled_owned());
    Running {
        base: format!("http://localhost:{port}"),
        url: format!("http://localhost:{port}/mcp"),
        stop,
        done: tokio::spawn(runner.serve()),
    }
}

async fn status(url: String) -> Result<u16, reqwest::Error> {
    crate::support::get(url).await.map(|r| r.status().as_u16())
}

#[tokio::test(flavor = "multi_thread")]
async fn serves_the_endpoint_own_routes_and_probes_over_http1_and_h2c() {
    let r = run(fixtures_server(), Duration::ZERO).await;
    let hello = crate::support::get(format!("{}/hello", r.base))
        .await
        .unwrap();
    assert_eq!(hello.headers()["x-served-by"], "runner-test");
    assert_eq!(hello.text().await.unwrap(), "hi");
    assert_eq!(status(format!("{}/healthz", r.base)).await.unwrap(), 200);
    assert_eq!(status(format!("{}/readyz", r.base)).await.unwrap(), 200);
    let x = Client::new(&r.url)
        .request(
            "tools/call",
            json!(1),
            json!({"name": "echo", "arguments": {"text": "over http/1.1"}}),
        )
        .await;
    assert_eq!(x.result()["content"][0]["text"], "over http/1.1");
    assert_eq!(x.headers["x-served-by"], "runner-test");
    // The same port speaks HTTP/2 without TLS (prior knowledge).
    let h2 = Client {
        http: crate::support::http_builder()
            .http2_prior_knowledge()
            .build()
            .unwrap(),
        url: r.url.clone(),
    };
    let x = h2
        .request(
            "tools/call",
            json!(2),
            json!({"name": "echo", "arguments": {"text": "over h2c"}}),
        )
        .await;
    assert_eq!(x.result()["content"][0]["text"], "over h2c");
    r.stop.cancel();
    r.done.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shutdown_signal_drains_readiness_first_then_listen_streams_then_returns() {
    let r = run(fixtures_server(), Duration::from_millis(800)).await;
    let client = Client::new(&r.url);
    let mut stream = Listener::open(&client, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(
        stream.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );
    r.stop.cancel();
    // Draining: not ready, still serving.
    let mut draining = false;
    for _ in 0..100 {
        if status(format!("{}/readyz", r.base)).await.unwrap() == 503 {
            draining = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(draining, "/readyz never answered 503 after the signal");
    assert_eq!(status(format!("{}/hello", r.base)).await.unwrap(), 200);
    // After the delay, the listen stream gets its graceful result and ends.
    let last = stream.next().await.expect("the graceful result");
    assert_eq!(last["id"], "l");
    assert_eq!(last["result"]["resultType"], "complete");
    assert!(stream.next().await.is_none());
    tokio::time::timeout(Duration::from_secs(15), r.done)
        .await
        .expect("serve returns after the drain")
        .unwrap()
        .unwrap();
    // The listener is closed: new connections are refused.
    assert!(status(format!("{}/healthz", r.base)).await.is_err());
}

//! The reference server on a Redis bus that goes away and comes back: `/readyz` reports the
//! lost broker, and once it is back every open listen stream gets the resync notifications
//! (events may have been missed), and later events flow again.

#![cfg(feature = "redis")]

use std::time::Duration;

use serde_json::json;

use crate::support::brokers::RedisServer;
use crate::support::listen::Listener;
use crate::support::process::spawn_server;
use crate::support::{Client, get};

async fn readyz(base: &str) -> (u16, String) {
    let r = get(format!("{base}/readyz"))
        .await
        .expect("/readyz answers");
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn until_readyz(base: &str, status: u16) -> String {
    for _ in 0..200 {
        let (s, body) = readyz(base).await;
        if s == status {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("/readyz never answered {status}");
}

#[tokio::test]
async fn a_lost_broker_is_reported_and_listen_streams_are_resynced_when_it_returns() {
    let mut redis = RedisServer::start();
    let srv = spawn_server(&[
        "--bus",
        &redis.url(),
        "--state-keys",
        crate::support::cluster::STATE_KEYS,
        "--fixtures",
        "conformance",
    ]);
    until_readyz(&srv.base, 200).await;
    let client = Client::new(&srv.url);
    let mut l = Listener::open(
        &client,
        json!("r"),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched"]}),
    )
    .await;
    assert_eq!(
        l.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );

    redis.kill();
    let body = until_readyz(&srv.base, 503).await;
    assert!(
        body.contains("bus") && body.contains("redis://127.0.0.1"),
        "the reason names the bus: {body}"
    );
    // Requests are still served meanwhile; only notifications are affected.
    let list = client.request("tools/list", json!(1), json!({})).await;
    assert_eq!(list.status, 200);

    redis.restart();
    until_readyz(&srv.base, 200).await;
    let mut resync = [l.next().await.unwrap(), l.next().await.unwrap()];
    resync.sort_by_key(|m| m["method"].as_str().unwrap().to_owned());
    assert_eq!(resync[0]["method"], "notifications/resources/updated");
    assert_eq!(resync[0]["params"]["uri"], "test://watched");
    assert_eq!(resync[1]["method"], "notifications/tools/list_changed");

    // Events flow again.
    client.trigger_tool_change(json!(2)).await;
    assert_eq!(l.next_kind().await, "notifications/tools/list_changed");
}

/// `/readyz` 200 with the bus under `degraded`, within the bounded wait.
async fn until_degraded(base: &str, degraded: bool) -> String {
    for _ in 0..200 {
        let (s, body) = readyz(base).await;
        assert_eq!(
            s, 200,
            "--bus-readiness report never fails readiness: {body}"
        );
        if body.contains("degraded") == degraded {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("/readyz never reported degraded={degraded}");
}

#[tokio::test]
async fn with_bus_readiness_report_a_lost_broker_degrades_without_failing_readiness() {
    let mut redis = RedisServer::start();
    let srv = spawn_server(&[
        "--bus",
        &redis.url(),
        "--state-keys",
        crate::support::cluster::STATE_KEYS,
        "--bus-readiness",
        "report",
    ]);
    until_degraded(&srv.base, false).await;
    redis.kill();
    let body = until_degraded(&srv.base, true).await;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "ready", "{body}");
    let reasons = v["degraded"].as_array().unwrap();
    assert!(
        reasons.len() == 1 && reasons[0].as_str().unwrap().starts_with("bus: "),
        "{body}"
    );
    // What still works while the bus is down: lists and calls.
    let client = Client::new(&srv.url);
    let list = client.request("tools/list", json!(1), json!({})).await;
    assert_eq!(list.status, 200);
    let call = client
        .request(
            "tools/call",
            json!(2),
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        )
        .await;
    assert_eq!(call.status, 200, "{}", call.body);
    redis.restart();
    until_degraded(&srv.base, false).await;
}

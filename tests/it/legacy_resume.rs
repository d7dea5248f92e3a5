//! Resumable 2025-11-25 POST streams across replicas: two in-process replicas of one
//! deployment (one key ring, bus and session store) sharing a `RedisEventStore` on a real
//! `redis-server`. `test_reconnection` (asked for progress) sends progress 1 of 3, closes its
//! POST stream, then sends progress 2 and 3 and its result; the client resumes with
//! `Last-Event-ID` on the OTHER replica and gets exactly the events after that id, none lost
//! or repeated; another session's `Last-Event-ID` gets nothing. Every message is checked
//! against the 2025-11-25 schema. The event store costs one Redis `EVAL` per event.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use stateless_mcp::backends::{EventLimits, RedisEventStore};

use crate::support::brokers::RedisServer;
use crate::support::http_request;
use crate::support::legacy::{Deployment, LegacyClient};
use crate::support::listen::sse_response;
use crate::support::redis_commands::calls;
use crate::support::schema;
use crate::support::{TestServer, start};

/// One SSE event as the client saw it: its id and its message (`None`: empty data).
type Seen = (Option<String>, Option<Value>);

/// Reads a whole SSE response (it must end within 10 s): its status and events, each
/// message checked against the schema.
async fn read_all(req: reqwest::RequestBuilder) -> (u16, Vec<Seen>) {
    let (status, headers, mut events) = sse_response(req).await;
    let kind = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(kind.starts_with("text/event-stream"), "{status} {kind}");
    let mut seen: Vec<Seen> = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = events.next().await {
            let event = event.expect("well-formed SSE");
            let message = (!event.data.is_empty()).then(|| {
                let m: Value = serde_json::from_str(&event.data).unwrap();
                schema::check_legacy_message(&m, Some("tools/call"));
                m
            });
            let id = (!event.id.is_empty()).then_some(event.id);
            seen.push((id, message));
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the stream ends within 10 s; it carried {seen:?}"));
    (status, seen)
}

fn get_after(client: &LegacyClient, url: &str, last_event_id: &str) -> reqwest::RequestBuilder {
    let mut req = client.http.get(url);
    for (k, v) in client.headers() {
        if k != "content-type" && k != "accept" {
            req = req.header(k, v);
        }
    }
    req.header("accept", "text/event-stream")
        .header("last-event-id", last_event_id)
}

fn seq_of(id: &str) -> u64 {
    id.rsplit_once('-').unwrap().1.parse().unwrap()
}

/// What a resumed stream carried: progress values, and the result's text (if any).
fn contents(seen: &[Seen]) -> (Vec<f64>, Option<String>) {
    let mut progress = Vec::new();
    let mut result = None;
    for (_, m) in seen {
        let m = m.as_ref().expect("no empty event after the priming one");
        if m["method"] == "notifications/progress" {
            progress.push(m["params"]["progress"].as_f64().unwrap());
        } else {
            assert_eq!(m["id"], 7, "{m}");
            assert_ne!(m["result"]["isError"], true, "{m}");
            result = m["result"]["content"][0]["text"]
                .as_str()
                .map(str::to_owned);
        }
    }
    (progress, result)
}

async fn replica(deployment: &Deployment, redis: &RedisServer) -> TestServer {
    let store = RedisEventStore::connect(&redis.url(), "it", EventLimits::default()).unwrap();
    start(
        deployment
            .builder()
            .event_store(Arc::new(store))
            .build()
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn a_closed_post_stream_resumes_on_another_replica_without_loss_or_repeat() {
    let redis = RedisServer::start();
    let deployment = Deployment::new();
    let (r1, r2) = (
        replica(&deployment, &redis).await,
        replica(&deployment, &redis).await,
    );
    let client = LegacyClient::connect(&r1.url, json!({})).await;

    // The POST on r1: the priming event (an id, empty data), progress 1, then the server
    // closes the stream.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "test_reconnection", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let post = http_request(
        &client.http,
        "POST",
        &r1.url,
        &client.headers(),
        call.to_string(),
    );
    let (status, on_post) = read_all(post).await;
    assert_eq!(status, 200);
    assert_eq!(on_post.len(), 2, "{on_post:?}");
    let (priming, first) = (&on_post[0], &on_post[1]);
    assert!(priming.0.is_some() && priming.1.is_none(), "{priming:?}");
    assert_eq!(contents(&on_post[1..]), (vec![1.0], None));
    let first_id = first.0.clone().expect("every event has an id");
    assert_eq!(seq_of(&first_id), seq_of(priming.0.as_ref().unwrap()) + 1);

    // Resumed at once on r2: the call still runs on r1; r2 waits for the rest in the store.
    let (status, rest) = read_all(get_after(&client, &r2.url, &first_id)).await;
    assert_eq!(status, 200);
    assert_eq!(
        contents(&rest),
        (
            vec![2.0, 3.0],
            Some(
                "Reconnection test completed successfully. If you received this, the client \
                 properly reconnected after stream closure."
                    .into()
            )
        )
    );
    let seqs: Vec<u64> = rest
        .iter()
        .map(|(id, _)| seq_of(id.as_ref().expect("every event has an id")))
        .collect();
    let from = seq_of(&first_id);
    assert_eq!(
        seqs,
        vec![from + 1, from + 2, from + 3],
        "none lost, none repeated"
    );

    // Resumed again on r1 from the middle: exactly what came after that id.
    let middle = rest[0].0.clone().unwrap();
    let (_, again) = read_all(get_after(&client, &r1.url, &middle)).await;
    assert_eq!(again, rest[1..].to_vec());
    // After the last event: nothing more, and the stream ends.
    let last = rest[2].0.clone().unwrap();
    let (status, nothing) = read_all(get_after(&client, &r2.url, &last)).await;
    assert_eq!((status, nothing.len()), (200, 0));

    // The cost: one EVAL per stored event (the priming event, three progress notifications,
    // the result); resuming only reads.
    assert_eq!(calls(&redis.url(), "eval").await, 5);

    // Another session's Last-Event-ID gets an empty stream that ends (never its events).
    let other = LegacyClient::connect(&r2.url, json!({})).await;
    let (status, stolen) = read_all(get_after(&other, &r2.url, &first_id)).await;
    assert_eq!((status, stolen.len()), (200, 0), "{stolen:?}");
    // An id that names no stream, or is no event id at all: the same.
    for id in ["nope", "AAAAAAAAAAAAAAAAAAAAAA-1"] {
        let (status, seen) = read_all(get_after(&client, &r1.url, id)).await;
        assert_eq!((status, seen.len()), (200, 0), "{id}");
    }

    // The store gone: resuming is refused with the one store-unavailable answer, at once.
    let mut redis = redis;
    redis.kill();
    let started = std::time::Instant::now();
    let resp = get_after(&client, &r2.url, &first_id).send().await.unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body["error"]["data"]["reason"], "store_unavailable",
        "{body}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

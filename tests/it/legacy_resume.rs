//! Resumable 2025-11-25 streams across replicas: two in-process replicas of one
//! deployment (one key ring, bus and session store) sharing a `RedisEventStore` on a real
//! `redis-server`. `test_reconnection` (asked for progress) sends progress 1 of 3, closes its
//! POST stream, then sends progress 2 and 3 and its result; the client resumes with
//! `Last-Event-ID` on the OTHER replica and gets exactly the events after that id, none lost
//! or repeated; another session's `Last-Event-ID` gets nothing. Every message is checked
//! against the 2025-11-25 schema. The event store costs one Redis `EVAL` per event.
//!
//! GET streams, when kept (`resumable_get_streams`): a stream ended on one replica resumes
//! on the other with the events after the client's id, then a resync, then live, under the
//! same stream name; another session's id gets a stream of its own.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use stateless_mcp::ServerBuilder;
use stateless_mcp::backends::{EventLimits, RedisEventStore};
use stateless_mcp::settings::ListenLimits;

use crate::support::brokers::RedisServer;
use crate::support::http_request;
use crate::support::legacy::{Deployment, LegacyClient};
use crate::support::listen::{Events, sse_response};
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
    get(client, url, Some(last_event_id))
}

/// A GET of the session's stream, with `Last-Event-ID` when given.
fn get(client: &LegacyClient, url: &str, last_event_id: Option<&str>) -> reqwest::RequestBuilder {
    let mut req = client.http.get(url);
    for (k, v) in client.headers() {
        if k != "content-type" && k != "accept" {
            req = req.header(k, v);
        }
    }
    let req = req.header("accept", "text/event-stream");
    match last_event_id {
        Some(id) => req.header("last-event-id", id),
        None => req,
    }
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
    replica_keeping_get_streams(deployment, redis, false).await
}

async fn replica_keeping_get_streams(
    deployment: &Deployment,
    redis: &RedisServer,
    get_streams: bool,
) -> TestServer {
    replica_with(deployment, redis, |b| b.resumable_get_streams(get_streams)).await
}

async fn replica_with(
    deployment: &Deployment,
    redis: &RedisServer,
    and: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> TestServer {
    let store = RedisEventStore::connect(&redis.url(), "it", EventLimits::default()).unwrap();
    start(
        and(deployment.builder().event_store(Arc::new(store)))
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

/// The next event of an open stream (it must come within 10 s): its id and message, checked
/// against the schema.
async fn next_event(events: &mut Events) -> Seen {
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event within 10 s")
        .expect("the stream goes on")
        .expect("well-formed SSE");
    let message = (!event.data.is_empty()).then(|| {
        let m: Value = serde_json::from_str(&event.data).unwrap();
        schema::check_legacy_message(&m, None);
        m
    });
    ((!event.id.is_empty()).then_some(event.id), message)
}

/// The stream an event id names (the id without its `-SEQ`).
fn stream_of(id: &str) -> &str {
    id.rsplit_once('-').unwrap().0
}

fn method(seen: &Seen) -> &str {
    seen.1.as_ref().expect("a message")["method"]
        .as_str()
        .unwrap()
}

/// Reads the `n` events of a resync, in ids following `after` on the stream `stream`: their
/// methods, sorted.
async fn resync(events: &mut Events, stream: &str, after: u64, n: usize) -> Vec<String> {
    let mut methods = Vec::new();
    for i in 1..=n as u64 {
        let seen = next_event(events).await;
        let id = seen.0.clone().expect("every event has an id");
        assert_eq!(
            (stream_of(&id), seq_of(&id)),
            (stream, after + i),
            "{seen:?}"
        );
        methods.push(method(&seen).to_owned());
    }
    methods.sort();
    methods
}

#[tokio::test]
async fn a_lost_get_stream_resumes_on_another_replica_with_what_it_missed_then_a_resync() {
    let redis = RedisServer::start();
    let deployment = Deployment::new();
    // r1 ends its GET streams after 4 s (as a drain or a proxy's timeout would), and the
    // client resumes on r2.
    let lifetime = ListenLimits::default().max_lifetime(Some(Duration::from_secs(4)));
    let (r1, r2) = (
        replica_with(&deployment, &redis, |b| {
            b.resumable_get_streams(true).listen_limits(lifetime)
        })
        .await,
        replica_keeping_get_streams(&deployment, &redis, true).await,
    );
    let client = LegacyClient::connect(&r1.url, json!({})).await;
    let on_r2 = client.at(&r2.url);
    let trigger = |name: &str| json!({"name": name, "arguments": {}});
    on_r2
        .request(
            json!(1),
            "resources/subscribe",
            json!({"uri": "test://watched-resource"}),
        )
        .await;

    // The GET stream on r1: a priming event (an id, empty data), then each change announced
    // on r2 with the next id of the same stream.
    let (status, _, mut events) = sse_response(get(&client, &r1.url, None)).await;
    assert_eq!(status, 200);
    let (priming, data) = next_event(&mut events).await;
    let priming = priming.expect("the priming event has an id");
    assert!(data.is_none(), "{data:?}");
    assert!(priming.starts_with("g."), "{priming}");
    let name = stream_of(&priming).to_owned();
    let first = seq_of(&priming);
    let mut announced = Vec::new();
    for (n, tool) in [
        (2, "test_trigger_tool_change"),
        (3, "test_trigger_resource_update"),
        (4, "test_trigger_prompt_change"),
    ] {
        on_r2.request(json!(n), "tools/call", trigger(tool)).await;
        announced.push(next_event(&mut events).await);
    }
    let [tools, updated, prompts]: [Seen; 3] = announced.try_into().expect("three events");
    assert_eq!(method(&tools), "notifications/tools/list_changed");
    assert_eq!(method(&updated), "notifications/resources/updated");
    assert_eq!(method(&prompts), "notifications/prompts/list_changed");
    let ids: Vec<&str> = [&tools, &updated, &prompts]
        .iter()
        .map(|s| s.0.as_deref().expect("every event has an id"))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            (stream_of(id), seq_of(id)),
            (name.as_str(), first + 1 + i as u64)
        );
    }

    // r1 ends the stream; a change is announced while no stream is open (stored nowhere).
    let end = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
    assert!(matches!(end, Ok(None)), "the stream ends at its lifetime");
    on_r2
        .request(json!(5), "tools/call", trigger("test_trigger_tool_change"))
        .await;

    // Resumed on r2 after the first change, as a client that never read the next two would:
    // those two again (same ids, same messages), then the resync (every list changed, the
    // subscribed resource updated), continuing the same stream.
    let (status, _, mut resumed) = sse_response(get(&client, &r2.url, Some(ids[0]))).await;
    assert_eq!(status, 200);
    assert_eq!(next_event(&mut resumed).await, updated);
    assert_eq!(next_event(&mut resumed).await, prompts);
    let last = seq_of(ids[2]);
    let all_lists = [
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
    ];
    let mut expected: Vec<&str> = all_lists.to_vec();
    expected.push("notifications/resources/updated");
    expected.sort();
    assert_eq!(resync(&mut resumed, &name, last, 4).await, expected);
    // Then live: a change announced on r1 reaches the resumed stream on r2, next in line.
    client
        .request(json!(6), "tools/call", trigger("test_trigger_tool_change"))
        .await;
    let live = next_event(&mut resumed).await;
    assert_eq!(method(&live), "notifications/tools/list_changed");
    let id = live.0.clone().unwrap();
    assert_eq!((stream_of(&id), seq_of(&id)), (name.as_str(), last + 5));
    drop(resumed);

    // Another session's Last-Event-ID: a new stream of its own (a new name, a priming
    // event) with a resync of its own (it subscribed to nothing), never this session's events.
    let other = LegacyClient::connect(&r2.url, json!({})).await;
    let (status, _, mut fresh) = sse_response(get(&other, &r2.url, Some(ids[0]))).await;
    assert_eq!(status, 200);
    let (id, data) = next_event(&mut fresh).await;
    let id = id.expect("the priming event has an id");
    assert!(
        data.is_none() && id.starts_with("g.") && stream_of(&id) != name,
        "{id}"
    );
    assert_eq!(
        resync(&mut fresh, stream_of(&id), seq_of(&id), 3).await,
        all_lists
    );
    drop(fresh);

    // The cost: one EVAL per stored event (two priming events, three changes, the resync's
    // four, the live one, the other session's three; nothing for the change announced while
    // no stream was open); resuming only reads.
    assert_eq!(calls(&redis.url(), "eval").await, 2 + 3 + 4 + 1 + 3);

    // Off (the default): a GET stream carries no ids and stores nothing.
    let plain = replica_keeping_get_streams(&deployment, &redis, false).await;
    let (status, _, mut events) = sse_response(get(&client, &plain.url, None)).await;
    assert_eq!(status, 200);
    on_r2
        .request(json!(7), "tools/call", trigger("test_trigger_tool_change"))
        .await;
    let (id, message) = next_event(&mut events).await;
    assert_eq!(id, None, "{message:?}");
    assert_eq!(calls(&redis.url(), "eval").await, 2 + 3 + 4 + 1 + 3);
}

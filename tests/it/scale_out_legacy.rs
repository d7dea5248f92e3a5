//! Legacy (2025-11-25) sessions across replicas, with real processes: three replicas of the
//! binary sharing one `redis-server` (the bus and, by default, the session store) and one
//! state key ring, behind a real nginx running the shipped `deploy/nginx/nginx.conf` (round
//! robin, no stickiness).
//!
//! A session is initialized on one replica and used on the others; what it changes
//! (`logging/setLevel`, `resources/subscribe`) on one replica is honoured on another; a GET
//! stream on one replica hears changes made on the others; `DELETE` ends the session on every
//! replica; a GET stream whose replica is SIGKILLed is reopened elsewhere with the same
//! session id; a server-to-client request's answer POSTed to another replica resumes the
//! handler on the replica holding the call. Every message is checked against the 2025-11-25
//! schema (`support::legacy`). Each test prints what happened (`--nocapture` shows it).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cluster::{Cluster, ClusterOptions, replica_of};
use crate::support::legacy::{LegacyClient, LegacyStream};
use crate::support::redis_commands::calls;
use crate::support::schema::assert_valid_legacy;
use crate::support::{ACROSS_REPLICAS, Exchange, eventually};

/// Prints one line of the narrative.
macro_rules! say {
    ($($t:tt)*) => { println!("[scale-out-legacy] {}", format!($($t)*)) };
}

/// What the user answers in these tests.
const USER_NAME: &str = "Ada Lovelace";

/// The client capabilities of an SDK with elicitation, sampling and roots handlers.
fn full_capabilities() -> Value {
    json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {"listChanged": true}})
}

/// Asserts a 200 answer whose result is exactly `{}` (as `ping` and `logging/setLevel`).
fn assert_empty_result(x: &Exchange, what: &str) {
    assert_eq!(x.status, 200, "{what}: {}", x.body);
    assert_eq!(x.result(), &json!({}), "{what} must answer exactly {{}}");
}

/// The text of a `tools/call` result with one text block.
fn only_text(result: &Value) -> &str {
    assert_ne!(result["isError"], true, "isError: {result}");
    let blocks = result["content"].as_array().expect("content");
    assert_eq!(blocks.len(), 1, "{result}");
    blocks[0]["text"].as_str().expect("a text block")
}

/// A session initialized through `url`: the client and the replica that answered.
async fn initialize(url: &str, capabilities: Value) -> (LegacyClient, String) {
    let mut client = LegacyClient::new(url);
    let x = client.initialize(capabilities).await;
    let id = client.session.clone().unwrap();
    assert!(
        !id.is_empty() && id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "session id {id:?} is not visible ASCII"
    );
    let caps = &x.result()["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true, "{caps}");
    assert_eq!(caps["resources"]["subscribe"], true, "{caps}");
    assert!(caps.get("logging").is_some(), "{caps}");
    assert!(x.result()["serverInfo"]["name"].is_string());
    (client, replica_of(&x.headers))
}

/// POSTs the client's answer `result` (checked against `def` of the 2025-11-25 schema first)
/// to the server-to-client request `id`, as `session` at `url`.
async fn answer(
    session: &LegacyClient,
    url: &str,
    id: &Value,
    def: &str,
    result: Value,
) -> Exchange {
    assert_valid_legacy(def, &result);
    session
        .at(url)
        .post(json!({"jsonrpc": "2.0", "id": id, "result": result}), None)
        .await
}

/// The next message on `stream` must be the notification `method`; its params.
async fn expect_notification(stream: &mut LegacyStream, method: &str, what: &str) -> Value {
    let m = stream
        .next()
        .await
        .unwrap_or_else(|| panic!("{what}: the stream ended before {method}"));
    assert_eq!(m["method"], method, "{what}: unexpected message {m}");
    m["params"].clone()
}

/// The `notifications/message` of an exchange.
fn log_messages(x: &Exchange) -> Vec<Value> {
    x.notifications()
        .into_iter()
        .filter(|n| n["method"] == "notifications/message")
        .cloned()
        .collect()
}

/// Calls `tool` (no arguments) as `session` at `url`; panics unless it succeeded.
async fn call(session: &LegacyClient, url: &str, id: u64, tool: &str) -> Exchange {
    let x = session
        .at(url)
        .request(
            json!(id),
            "tools/call",
            json!({"name": tool, "arguments": {}}),
        )
        .await;
    assert_eq!(x.status, 200, "{tool}: {}", x.body);
    assert_ne!(x.result()["isError"], true, "{tool}: {}", x.body);
    x
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_session_is_served_by_every_replica() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let lb = cluster.nginx.url.clone();
    let url = |r: &str| cluster.replica(r).url.clone();

    // 1. initialize through nginx; the session is a token any replica opens.
    let (s, home) = initialize(&lb, full_capabilities()).await;
    say!(
        "initialize answered by {home}: an Mcp-Session-Id of {} bytes",
        s.session.as_ref().unwrap().len()
    );

    // 2. Calls on the other replicas, then through nginx until every replica answered.
    let others: Vec<String> = cluster.ids().into_iter().filter(|r| *r != home).collect();
    let mut id = 1;
    for r in &others {
        id += 1;
        let x = s
            .at(&url(r))
            .request(json!(id), "tools/list", json!({}))
            .await;
        assert_eq!(x.status, 200, "tools/list on {r}: {}", x.body);
        assert_eq!(replica_of(&x.headers), *r);
        let tools = x.result()["tools"].as_array().unwrap();
        assert!(!tools.is_empty(), "{}", x.body);
        assert!(
            tools.iter().all(|t| t["inputSchema"]["type"] == "object"),
            "{}",
            x.body
        );
        id += 1;
        let x = s.at(&url(r)).request(json!(id), "ping", json!({})).await;
        assert_empty_result(&x, "ping");
    }
    let mut answered = BTreeSet::new();
    for _ in 0..30 {
        id += 1;
        let x = call(&s, &lb, id, "test_simple_text").await;
        assert_eq!(
            only_text(x.result()),
            "This is a simple text response for testing."
        );
        answered.insert(replica_of(&x.headers));
        if answered.len() == 3 {
            break;
        }
    }
    say!("tools/list and ping on {others:?}; tools/call through nginx answered by {answered:?}");
    assert_eq!(answered.len(), 3, "nginx never reached every replica");

    // 3. logging/setLevel on one replica is honoured on the others.
    let (a, b, c) = ("r1", "r2", "r3");
    let set_level = |at: &str, level: &str, id: u64| {
        let client = s.at(&url(at));
        let level = level.to_owned();
        async move {
            let x = client
                .request(json!(id), "logging/setLevel", json!({"level": level}))
                .await;
            assert_empty_result(&x, "logging/setLevel");
        }
    };
    id += 1;
    // (Each within ACROSS_REPLICAS: when the bus's announcement reached the replica.)
    set_level(a, "debug", id).await;
    for r in [b, c] {
        id += 1;
        let what = format!("setLevel debug on {a} honoured on {r}");
        eventually(ACROSS_REPLICAS, &what, || async {
            let x = call(&s, &url(r), id, "test_logging_tool").await;
            let logs = log_messages(&x);
            if let Some(log) = logs.first() {
                assert_eq!(logs.len(), 1, "{what}: {}", x.body);
                assert_eq!(log["params"]["level"], "info");
                assert_eq!(log["params"]["data"], "logging tool called");
            }
            !logs.is_empty()
        })
        .await;
    }
    id += 1;
    set_level(b, "error", id).await;
    for r in [a, c] {
        id += 1;
        let what = format!("setLevel error on {b} honoured on {r} (no info log)");
        eventually(ACROSS_REPLICAS, &what, || async {
            log_messages(&call(&s, &url(r), id, "test_logging_tool").await).is_empty()
        })
        .await;
    }
    say!(
        "setLevel debug on {a}: info logs on {b} and {c}; setLevel error on {b}: none on {a} or {c}"
    );

    // 4. A GET stream on one replica hears what the others change, and the subscriptions
    //    made on yet another replica.
    let mut get = s.at(&url(a)).open_stream().await;
    assert_eq!(get.status, 200, "GET on {a}");
    let content_type = get.headers["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    id += 1;
    call(&s, &url(b), id, "test_trigger_tool_change").await;
    expect_notification(
        &mut get,
        "notifications/tools/list_changed",
        "tools change on r2",
    )
    .await;
    id += 1;
    call(&s, &url(c), id, "test_trigger_prompt_change").await;
    expect_notification(
        &mut get,
        "notifications/prompts/list_changed",
        "prompts change on r3",
    )
    .await;
    let watched = json!({"uri": "test://watched-resource"});
    id += 1;
    let x = s
        .at(&url(c))
        .request(json!(id), "resources/subscribe", watched.clone())
        .await;
    assert_eq!(x.status, 200, "resources/subscribe: {}", x.body);
    id += 1;
    call(&s, &url(b), id, "test_trigger_resource_update").await;
    let params = expect_notification(
        &mut get,
        "notifications/resources/updated",
        "subscribed on r3, updated on r2",
    )
    .await;
    assert_eq!(params["uri"], "test://watched-resource");
    id += 1;
    let x = s
        .at(&url(b))
        .request(json!(id), "resources/unsubscribe", watched)
        .await;
    assert_eq!(x.status, 200, "resources/unsubscribe: {}", x.body);
    // After the unsubscribe, an update must not reach the stream: the tools change sent
    // after it must be the next message.
    id += 1;
    call(&s, &url(c), id, "test_trigger_resource_update").await;
    id += 1;
    call(&s, &url(b), id, "test_trigger_tool_change").await;
    expect_notification(
        &mut get,
        "notifications/tools/list_changed",
        "unsubscribed on r2: no resources/updated before this tools change",
    )
    .await;
    say!(
        "GET stream on {a}: tools change from {b}, prompts change from {c}, resources/updated \
         after subscribe on {c} (none after unsubscribe on {b})"
    );

    // 5. DELETE on one replica ends the session on every replica.
    let status = s.at(&url(c)).delete().await;
    assert!((200..300).contains(&status), "DELETE answered {status}");
    for r in cluster.ids() {
        id += 1;
        let what = format!("DELETE on {c} honoured on {r}");
        eventually(ACROSS_REPLICAS, &what, || async {
            let x = s
                .at(&url(&r))
                .request(json!(id), "tools/list", json!({}))
                .await;
            x.status == 404
        })
        .await;
        let g = s.at(&url(&r)).open_stream().await;
        assert_eq!(g.status, 404, "GET on {r} after DELETE");
    }
    id += 1;
    let x = s.at(&lb).request(json!(id), "tools/list", json!({})).await;
    assert_eq!(
        x.status, 404,
        "tools/list through nginx after DELETE: {}",
        x.body
    );
    say!("DELETE on {c}: tools/list and GET answer 404 on r1, r2, r3 and through nginx");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_get_stream_reopens_on_another_replica_after_sigkill() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let lb = cluster.nginx.url.clone();
    let (s, _) = initialize(&lb, json!({})).await;
    let url = |r: &str| cluster.replica(r).url.clone();

    let mut get = s.open_stream().await;
    assert_eq!(get.status, 200, "GET through nginx");
    let holder = replica_of(&get.headers);
    let other = cluster.ids().into_iter().find(|r| *r != holder).unwrap();
    call(&s, &url(&other), 1, "test_trigger_tool_change").await;
    expect_notification(
        &mut get,
        "notifications/tools/list_changed",
        "before the kill",
    )
    .await;
    say!("GET stream on {holder} heard a tools change made on {other}; SIGKILL {holder}");

    cluster.replica(&holder).signal("KILL");
    assert!(
        get.ends_within(Duration::from_secs(20)).await,
        "the GET stream of the killed replica {holder} did not end"
    );

    // The client reopens the GET through nginx with the same session id; nginx passes a
    // refused connection on to a live replica.
    let mut reopened = None;
    for _ in 0..20 {
        let g = s.open_stream().await;
        if g.status == 200 {
            reopened = Some(g);
            break;
        }
        assert!(
            matches!(g.status, 502..=504),
            "reopening the GET answered {}",
            g.status
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut get = reopened.expect("the GET stream reopened through nginx");
    let now = replica_of(&get.headers);
    assert_ne!(now, holder, "the killed replica answered");
    let third = cluster
        .ids()
        .into_iter()
        .find(|r| *r != holder && *r != now)
        .unwrap();
    call(&s, &url(&third), 2, "test_trigger_tool_change").await;
    expect_notification(
        &mut get,
        "notifications/tools/list_changed",
        "after the kill",
    )
    .await;
    call(&s, &url(&now), 3, "test_trigger_prompt_change").await;
    expect_notification(
        &mut get,
        "notifications/prompts/list_changed",
        "after the kill",
    )
    .await;
    say!("same session id: GET reopened on {now}, heard changes made on {third} and {now}");
}

/// One server-to-client request the tests answer: the schema definition of the answer, and
/// what the client's handler returns.
fn answer_for(request: &Value) -> (&'static str, Value) {
    match request["method"].as_str() {
        Some("elicitation/create") => {
            let message = request["params"]["message"].as_str().unwrap_or_default();
            let content = if message.contains("color") {
                json!({"color": "teal"})
            } else {
                json!({"name": USER_NAME})
            };
            (
                "ElicitResult",
                json!({"action": "accept", "content": content}),
            )
        }
        Some("sampling/createMessage") => (
            "CreateMessageResult",
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris."},
                   "model": "interop-model", "stopReason": "endTurn"}),
        ),
        Some("roots/list") => (
            "ListRootsResult",
            json!({"roots": [{"uri": "file:///work/project", "name": "project"},
                             {"uri": "file:///work/notes"}]}),
        ),
        _ => panic!("unexpected server-to-client request {request}"),
    }
}

/// Where one call's stream and answers went.
struct Round {
    stream: String,
    answers: Vec<String>,
    asked: Vec<String>,
    text: String,
}

/// Calls `tool` through `call_url` as an SSE stream and answers every server-to-client
/// request on it at the URL `answer_url(stream replica, n)` picks (n counts the answers);
/// returns once the call's result arrived.
async fn run_call(
    session: &LegacyClient,
    call_url: &str,
    id: u64,
    tool: &str,
    answer_url: impl Fn(&str, usize) -> String,
) -> Round {
    let mut stream = session
        .at(call_url)
        .stream_request(
            json!(id),
            "tools/call",
            json!({"name": tool, "arguments": {}}),
        )
        .await;
    assert_eq!(stream.status, 200, "{tool}");
    let on = replica_of(&stream.headers);
    let mut round = Round {
        stream: on.clone(),
        answers: Vec::new(),
        asked: Vec::new(),
        text: String::new(),
    };
    loop {
        let m = stream
            .next()
            .await
            .unwrap_or_else(|| panic!("{tool}: the stream ended without a result"));
        if m.get("method").is_some() && m.get("id").is_some() {
            let (def, result) = answer_for(&m);
            let to = answer_url(&on, round.answers.len());
            let x = answer(session, &to, &m["id"], def, result).await;
            assert_eq!(x.status, 202, "answer to {}: {}", m["method"], x.body);
            round.answers.push(replica_of(&x.headers));
            round.asked.push(m["method"].as_str().unwrap().to_owned());
        } else if m.get("method").is_none() {
            assert_eq!(m["id"], json!(id), "{m}");
            round.text = only_text(&m["result"]).to_owned();
            return round;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_posted_to_another_replica_resume_the_call() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let lb = cluster.nginx.url.clone();
    let ids = cluster.ids();
    let (s, _) = initialize(&lb, full_capabilities()).await;
    // Every answer goes to a replica other than the one holding the call.
    let elsewhere = |on: &str, n: usize| {
        let others: Vec<&String> = ids.iter().filter(|r| *r != on).collect();
        cluster.replica(others[n % others.len()]).url.clone()
    };

    let cases: [(&str, &[&str], &str); 4] = [
        (
            "test_input_required_result_elicitation",
            &["elicitation/create"],
            "Hello, Ada Lovelace!",
        ),
        (
            "test_input_required_result_multiple_inputs",
            &["elicitation/create", "roots/list", "sampling/createMessage"],
            "Ada Lovelace: greeting received, 2 root(s)",
        ),
        (
            "test_input_required_result_multi_round",
            &["elicitation/create", "elicitation/create"],
            "Ada Lovelace likes teal",
        ),
        (
            "test_input_required_result_list_roots",
            &["roots/list"],
            "The client has 2 root(s)",
        ),
    ];
    let mut id = 10;
    for (tool, asked, text) in cases {
        id += 1;
        let round = run_call(&s, &lb, id, tool, elsewhere).await;
        let mut got = round.asked.clone();
        got.sort();
        assert_eq!(got, asked, "{tool}: server-to-client requests");
        assert_eq!(round.text, text, "{tool}");
        assert!(
            round.answers.iter().all(|a| *a != round.stream),
            "{tool}: an answer landed on the stream's replica: {:?} vs {}",
            round.answers,
            round.stream
        );
        say!(
            "{tool}: call on {}, {:?} answered on {:?} -> {:?}",
            round.stream,
            round.asked,
            round.answers,
            round.text
        );
    }

    // Everything through nginx: the answers land wherever round robin sends them.
    let mut crossed = 0;
    for n in 0..6 {
        id += 1;
        let round = run_call(
            &s,
            &lb,
            id,
            "test_input_required_result_sampling",
            |_, _| lb.clone(),
        )
        .await;
        assert_eq!(round.text, "The model answered (interop-model)");
        if round.answers[0] != round.stream {
            crossed += 1;
        }
        say!(
            "sampling {n} through nginx: call on {}, answer on {}",
            round.stream,
            round.answers[0]
        );
    }
    say!("{crossed} of 6 answers through nginx landed on another replica than their call");

    // Another session cannot answer this session's request; a late answer is acknowledged
    // and dropped.
    let (intruder, _) = initialize(&lb, full_capabilities()).await;
    id += 1;
    let mut stream = s
        .at(&cluster.replica("r1").url)
        .stream_request(
            json!(id),
            "tools/call",
            json!({"name": "test_input_required_result_elicitation", "arguments": {}}),
        )
        .await;
    let request = stream.next().await.expect("an elicitation request");
    assert_eq!(request["method"], "elicitation/create", "{request}");
    let forged = answer(
        &intruder,
        &cluster.replica("r2").url,
        &request["id"],
        "ElicitResult",
        json!({"action": "accept", "content": {"name": "Mallory"}}),
    )
    .await;
    let (def, result) = answer_for(&request);
    let x = answer(
        &s,
        &cluster.replica("r3").url,
        &request["id"],
        def,
        result.clone(),
    )
    .await;
    assert_eq!(x.status, 202, "{}", x.body);
    let done = stream.next().await.expect("the call's result");
    assert_eq!(
        only_text(&done["result"]),
        format!("Hello, {USER_NAME}!"),
        "another session's answer (HTTP {}) was taken",
        forged.status
    );
    let late = answer(&s, &cluster.replica("r2").url, &request["id"], def, result).await;
    assert_eq!(late.status, 202, "a late answer: {}", late.body);
    say!(
        "another session's answer: HTTP {}, ignored; the session's own answer on r3 resumed the \
         call on r1; a late answer: HTTP {}",
        forged.status,
        late.status
    );
}

/// Sliding expiry across replicas on a real Redis: a session used every 100 ms on all three
/// replicas in turn outlives its 2 s idle limit, at the cost of fewer `HGETALL`s than
/// requests (each replica keeps the settings it read for a second, and reads them again
/// before it would refuse the session as idle or record its use) and about one write
/// (`EVAL`) per second (half the idle limit), counted by Redis itself; then, left idle, it
/// gets 404 on every replica.
#[tokio::test(flavor = "multi_thread")]
async fn sliding_expiry_across_replicas_costs_one_write_per_half_idle_limit() {
    let cluster = Cluster::start(ClusterOptions {
        extra_args: vec!["--session-idle-secs".into(), "2".into()],
        ..ClusterOptions::default()
    })
    .await;
    let (session, _) = initialize(&cluster.replicas[0].url, json!({})).await;
    let clients: Vec<LegacyClient> = cluster
        .replicas
        .iter()
        .map(|r| session.at(&r.url))
        .collect();
    let url = cluster.redis.url();
    let (reads0, writes0) = (calls(&url, "hgetall").await, calls(&url, "eval").await);
    let started = std::time::Instant::now();
    let mut requests = 0u64;
    while started.elapsed() < Duration::from_secs(6) {
        let x = clients[requests as usize % clients.len()]
            .request(json!(requests), "ping", json!({}))
            .await;
        assert_empty_result(&x, &format!("ping {requests} at {:?}", started.elapsed()));
        requests += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let reads = calls(&url, "hgetall").await - reads0;
    let writes = calls(&url, "eval").await - writes0;
    say!(
        "sliding expiry: {requests} requests over 6 s on 3 replicas: {reads} HGETALL, {writes} EVAL (idle limit 2 s)"
    );
    assert!(
        reads < requests,
        "{reads} session reads for {requests} requests: the settings are cached"
    );
    assert!(
        (4..=9).contains(&writes),
        "{writes} refresh writes for {requests} requests"
    );
    // Idle for longer than the limit: 404 on every replica.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    for c in &clients {
        let x = c.request(json!("late"), "ping", json!({})).await;
        assert_eq!(x.status, 404, "an idle session: {}", x.body);
    }
}

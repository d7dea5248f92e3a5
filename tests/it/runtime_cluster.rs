//! The runtime tool set on three replica processes sharing a real `redis-server`
//! (`--runtime-tools`, the pattern of `examples/runtime_tools.rs`): a change made through one
//! replica's admin route reaches the listen (and legacy GET) streams on the others, every replica's
//! `tools/list` converges, and a replica started later serves the current set. Each runtime
//! tool comes with its skill: the resource list changes with it (`resources/list_changed`
//! on every replica) and every replica's `skills/list` follows. The admin
//! route wants the `--admin-token`; every replica's `/metrics` labels the runtime tool by
//! its name.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::observability::{scrape, series};
use crate::support::cluster::{Cluster, ClusterOptions, STATE_KEYS};
use crate::support::legacy::LegacyClient;
use crate::support::listen::Listener;
use crate::support::process::spawn_server;
use crate::support::{Client, http};

const TOOLS_CHANGED: &str = "notifications/tools/list_changed";
const RESOURCES_CHANGED: &str = "notifications/resources/list_changed";
/// The skill that comes with `runtime_upper`.
const UPPER_SKILL: &str = "skill://runtime/runtime-upper/SKILL.md";

/// Reads `l` until a notification of `kind` arrives (others may come first).
async fn until_kind(l: &mut Listener, kind: &str) {
    for _ in 0..10 {
        if l.next_kind().await == kind {
            return;
        }
    }
    panic!("no {kind} among the next 10 notifications");
}

/// Waits until a replica's `skills/list` has (or has not) the skill `uri`.
async fn until_skill(c: &Client, uri: &str, present: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (mut listed, mut cursor) = (false, None::<String>);
        loop {
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let x = c.request("skills/list", json!("s"), params).await;
            if x.response().get("error").is_some() {
                break; // The list changed under the walk: look again.
            }
            let r = x.result();
            listed |= r["skills"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["uri"] == uri);
            match r["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        if listed == present {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{uri} listed: {listed} after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every tool name of a replica's list, following its cursors (pages of 2).
async fn all_tools(c: &Client) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 0.. {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let x = c.request("tools/list", json!(id), params).await;
        if x.response().get("error").is_some() {
            // The list changed under the walk: start again.
            assert_eq!(x.error_code(), -32602, "{}", x.body);
            names.clear();
            cursor = None;
            continue;
        }
        let r = x.result();
        names.extend(
            r["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        match r["nextCursor"].as_str() {
            Some(n) => cursor = Some(n.to_owned()),
            None => break,
        }
    }
    names
}

/// Waits (up to 20 s, a bound against hanging, not a measurement) until `c` lists `tool`
/// (`present`) or not; returns its list.
async fn until_listed(c: &Client, tool: &str, present: bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let names = all_tools(c).await;
        if names.iter().any(|n| n == tool) == present {
            return names;
        }
        assert!(
            Instant::now() < deadline,
            "{} never {}listed {tool}: {names:?}",
            c.url,
            if present { "" } else { "un" }
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The `--admin-token` of the replicas.
const ADMIN_TOKEN: &str = "runtime-cluster-admin-token-5e0c";

/// The status of an admin request with `Authorization: Bearer {token}` (none: no header).
async fn admin_as(base: &str, method: reqwest::Method, tool: &str, token: Option<&str>) -> u16 {
    let mut request = http().request(method, format!("{base}/admin/tools/{tool}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap().status().as_u16()
}

async fn admin(base: &str, method: reqwest::Method, tool: &str) -> u16 {
    admin_as(base, method, tool, Some(ADMIN_TOKEN)).await
}

fn text(x: &crate::support::Exchange) -> Value {
    x.result()["content"][0]["text"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_through_one_replica_reaches_every_replica() {
    let c = Cluster::start(ClusterOptions {
        extra_args: vec![
            "--runtime-tools".into(),
            "--admin-token".into(),
            ADMIN_TOKEN.into(),
        ],
        ..ClusterOptions::default()
    })
    .await;
    let clients: Vec<Client> = c.replicas.iter().map(|r| Client::new(&r.url)).collect();
    let before = all_tools(&clients[0]).await;
    assert!(
        !before.iter().any(|n| n.starts_with("runtime_")),
        "{before:?}"
    );
    let mut listeners = Vec::new();
    for (i, client) in clients.iter().enumerate() {
        let filter = json!({"toolsListChanged": true, "resourcesListChanged": true});
        let mut l = Listener::open(client, json!(i), filter).await;
        assert_eq!(
            l.next_kind().await,
            "notifications/subscriptions/acknowledged"
        );
        listeners.push(l);
    }
    // And a legacy (2025-11-25) client's GET stream on r2.
    let legacy = LegacyClient::connect(&c.replicas[1].url, json!({})).await;
    let mut legacy_stream = legacy.open_stream().await;
    assert_eq!(legacy_stream.status, 200);

    // Without the admin token: 401, and nothing changes (checked by the lists below).
    for token in [None, Some("runtime-cluster-admin-token-5e0"), Some("wrong")] {
        let status = admin_as(
            &c.replicas[0].base,
            reqwest::Method::PUT,
            "runtime_upper",
            token,
        );
        assert_eq!(status.await, 401, "{token:?}");
    }
    assert_eq!(
        admin_as(&c.replicas[0].base, reqwest::Method::PUT, "nope", None).await,
        401,
        "no name is looked at before the token"
    );

    // Enabled through r1's admin route: every replica's stream hears it, every list has it.
    assert_eq!(
        admin(&c.replicas[0].base, reqwest::Method::PUT, "runtime_upper").await,
        204
    );
    // The tool and its skill: the tool list and the resource list (the skill's files).
    for l in &mut listeners {
        let mut heard = vec![l.next_kind().await, l.next_kind().await];
        heard.sort();
        assert_eq!(heard, [RESOURCES_CHANGED, TOOLS_CHANGED]);
    }
    let mut heard = Vec::new();
    for _ in 0..2 {
        let m = legacy_stream.next().await.unwrap();
        heard.push(m["method"].as_str().unwrap().to_owned());
    }
    heard.sort();
    assert_eq!(heard, [RESOURCES_CHANGED, TOOLS_CHANGED]);
    for client in &clients {
        until_skill(client, UPPER_SKILL, true).await;
    }
    let mut lists = Vec::new();
    for client in &clients {
        lists.push(until_listed(client, "runtime_upper", true).await);
    }
    assert!(
        lists.windows(2).all(|w| w[0] == w[1]),
        "lists differ: {lists:?}"
    );
    assert_eq!(lists[0].len(), before.len() + 1);
    let called = clients[2]
        .request(
            "tools/call",
            json!(1),
            json!({"name": "runtime_upper", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(text(&called), "HI");
    // r3 applied the change it heard on the bus: its metrics name the tool.
    let metrics = scrape(&c.replicas[2].base).await;
    let ok_upper = [
        ("method", "tools/call"),
        ("name", "runtime_upper"),
        ("outcome", "ok"),
    ];
    let total = "mcp_server_requests_total";
    assert_eq!(series(&metrics, total, &ok_upper), Some(1.0), "{metrics}");

    // A second tool through r2, then the first disabled through r3.
    assert_eq!(
        admin(&c.replicas[1].base, reqwest::Method::PUT, "runtime_reverse").await,
        204
    );
    assert_eq!(
        admin(
            &c.replicas[2].base,
            reqwest::Method::DELETE,
            "runtime_upper"
        )
        .await,
        204
    );
    // An unknown name is refused and changes nothing.
    assert_eq!(
        admin(&c.replicas[0].base, reqwest::Method::PUT, "nope").await,
        404
    );
    let mut lists = Vec::new();
    for client in &clients {
        until_listed(client, "runtime_reverse", true).await;
        lists.push(until_listed(client, "runtime_upper", false).await);
    }
    assert!(
        lists.windows(2).all(|w| w[0] == w[1]),
        "lists differ: {lists:?}"
    );
    for l in &mut listeners {
        until_kind(l, TOOLS_CHANGED).await;
    }
    for client in &clients {
        until_skill(client, UPPER_SKILL, false).await;
    }
    let gone = clients[0]
        .request(
            "tools/call",
            json!(2),
            json!({"name": "runtime_upper", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(gone.error_code(), -32602, "{}", gone.body);

    // A replica started now reads the current set before anyone announces anything.
    let bus = c.redis.url();
    let late = spawn_server(&[
        "--bus",
        &bus,
        "--fixtures",
        "conformance",
        "--page-size",
        "2",
        "--state-keys",
        STATE_KEYS,
        "--runtime-tools",
        "--admin-token",
        ADMIN_TOKEN,
    ]);
    let late = Client::new(&late.url);
    assert_eq!(until_listed(&late, "runtime_reverse", true).await, lists[0]);
    let reversed = late
        .request(
            "tools/call",
            json!(3),
            json!({"name": "runtime_reverse", "arguments": {"text": "abc"}}),
        )
        .await;
    assert_eq!(text(&reversed), "cba");
}

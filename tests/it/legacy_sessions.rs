//! Legacy (2025-11-25) sessions on the same endpoint: the handshake, the sealed session id
//! any replica opens, the refusals (400 missing; 404 tampered, foreign, expired, another
//! principal, deleted), the legacy-only methods, and that the 2026 path is unchanged.
//! Two in-process servers sharing a key ring, a bus and a session store stand for two
//! replicas.

use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};
use stateless_mcp::handler::Principal;
use stateless_mcp::{Server, StreamableHttp};

use crate::support::legacy::{Deployment, LegacyClient, fixtures};
use crate::support::{Client, start, start_router};

const K2: &str = "k2:HxscGRoYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEAAAA=";

/// A caller named by the `x-test-user` header, as an authentication layer would put it.
async fn as_user(mut req: Request, next: Next) -> Response {
    if let Some(user) = req
        .headers()
        .get("x-test-user")
        .and_then(|v| v.to_str().ok())
    {
        let principal = Principal::new(user).with_issuer("https://as.example");
        req.extensions_mut().insert(principal);
    }
    next.run(req).await
}

#[tokio::test]
async fn initialize_negotiates_and_issues_a_session() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let mut c = LegacyClient::new(&srv.url);
    let x = c
        .initialize(json!({"sampling": {}, "elicitation": {}}))
        .await;
    let r = x.result();
    assert_eq!(r["protocolVersion"], "2025-11-25");
    assert_eq!(r["serverInfo"]["name"], "stateless-mcp");
    let caps = &r["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true, "{caps}");
    assert_eq!(caps["prompts"]["listChanged"], true);
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert!(caps["logging"].is_object() && caps["completions"].is_object());
    let id = c.session.clone().unwrap();
    assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");

    for (asked, got) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
    ] {
        let mut c = LegacyClient::new(&srv.url);
        c.version = asked.into();
        c.initialize(json!({})).await;
        assert_eq!(c.version, got, "asked {asked}");
    }
    let mut again = LegacyClient::new(&srv.url);
    again.initialize(json!({})).await;
    assert_ne!(
        again.session.unwrap(),
        id,
        "each initialize is a new session"
    );
}

#[tokio::test]
async fn ping_and_set_level_answer_exactly_empty() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = LegacyClient::connect(&srv.url, json!({})).await;
    let x = c.request(json!(1), "ping", json!({})).await;
    assert_eq!(x.result(), &json!({}));
    let x = c
        .request(json!("lvl"), "logging/setLevel", json!({"level": "info"}))
        .await;
    assert_eq!(
        x.response(),
        &json!({"jsonrpc": "2.0", "id": "lvl", "result": {}})
    );
    let bad = c
        .request(json!(2), "logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad.status, 200, "a JSON-RPC error on the legacy wire");
    assert_eq!(bad.error_code(), -32602);
    let unknown = c.request(json!(3), "server/discover", json!({})).await;
    assert_eq!(unknown.error_code(), -32601);
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let x = c
            .request(json!(4), method, json!({"uri": "test://watched-resource"}))
            .await;
        assert_eq!(x.result(), &json!({}), "{method}");
    }
    let x = c
        .request(json!(5), "resources/subscribe", json!({"uri": "no-scheme"}))
        .await;
    assert_eq!(x.error_code(), -32602);
}

#[tokio::test]
async fn the_shared_methods_run_as_on_the_2026_path_on_any_replica() {
    let d = Deployment::new();
    let (a, b) = (d.replica().await, d.replica().await);
    let mut c = LegacyClient::connect(&a.url, json!({})).await;
    c.url = b.url.clone();
    let tools = c.request(json!(1), "tools/list", json!({})).await;
    assert!(tools.result()["tools"].as_array().unwrap().len() > 10);
    let call = c
        .request(
            json!(2),
            "tools/call",
            json!({"name": "test_simple_text", "arguments": {}}),
        )
        .await;
    assert_eq!(
        call.result()["content"][0]["text"],
        "This is a simple text response for testing."
    );
    let read = c
        .request(
            json!(3),
            "resources/read",
            json!({"uri": "test://static-text"}),
        )
        .await;
    assert!(read.result()["contents"][0]["text"].is_string());
    let prompt = c
        .request(
            json!(4),
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
        )
        .await;
    assert!(prompt.result()["messages"].is_array());
    let done = c
        .request(
            json!(5),
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "pa"}}),
        )
        .await;
    assert_eq!(done.result()["completion"]["values"][0], "paris");
    let unknown = c
        .request(json!(6), "tools/call", json!({"name": "nope"}))
        .await;
    assert_eq!((unknown.status, unknown.error_code()), (200, -32602));
}

#[tokio::test]
async fn a_missing_session_is_400_and_an_unknown_one_404() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = LegacyClient::connect(&srv.url, json!({})).await;
    let mut none = c.clone();
    none.session = None;
    let x = none.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(x.status, 400, "{}", x.body);
    assert_eq!(x.response()["id"], 1);

    let mut tampered = c.clone();
    tampered.session = Some(format!("{}A", c.session.as_ref().unwrap()));
    assert_eq!(
        tampered
            .request(json!(1), "tools/list", json!({}))
            .await
            .status,
        404
    );
    let mut junk = c.clone();
    junk.session = Some("v1.k1.AAAA".into());
    assert_eq!(junk.request(json!(1), "ping", json!({})).await.status, 404);

    // Another deployment (another key ring) does not know it.
    let other = start(
        fixtures(Server::builder())
            .state_keys(K2.parse().unwrap())
            .build()
            .unwrap(),
    )
    .await;
    let mut foreign = c.clone();
    foreign.url = other.url.clone();
    assert_eq!(
        foreign.request(json!(1), "ping", json!({})).await.status,
        404
    );
    // A notification naming a dead session is refused too; without one it is accepted.
    let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(foreign.post(n.clone(), None).await.status, 404);
    let mut anonymous = foreign.clone();
    anonymous.session = None;
    assert_eq!(anonymous.post(n, None).await.status, 202);

    // Expired. A session id carries its issue time in whole seconds: a 3 s ttl leaves it
    // valid for at least 2 s, and the first ping comes at once.
    let short = start(
        d.builder()
            .session_ttl(Duration::from_secs(3))
            .build()
            .unwrap(),
    )
    .await;
    let c = LegacyClient::connect(&short.url, json!({})).await;
    assert_eq!(c.request(json!(1), "ping", json!({})).await.status, 200);
    let c = &c;
    crate::support::eventually(
        Duration::from_secs(15),
        "the session did not expire",
        move || async move { c.request(json!(1), "ping", json!({})).await.status == 404 },
    )
    .await;
}

#[tokio::test]
async fn delete_ends_the_session_on_every_replica() {
    let d = Deployment::new();
    let (a, b) = (d.replica().await, d.replica().await);
    let c = LegacyClient::connect(&a.url, json!({})).await;
    let mut on_b = c.clone();
    on_b.url = b.url.clone();
    assert_eq!(on_b.request(json!(1), "ping", json!({})).await.status, 200);
    assert_eq!(c.delete().await, 204);
    for client in [&c, &on_b] {
        let x = client.request(json!(2), "tools/list", json!({})).await;
        assert_eq!(x.status, 404, "{}", x.body);
    }
    assert_eq!(on_b.delete().await, 404);
    let mut none = c.clone();
    none.session = None;
    assert_eq!(
        none.delete().await,
        400,
        "DELETE without a session that says it speaks 2025-11-25: that revision's 400"
    );
}

/// GET and DELETE without `Mcp-Session-Id` answer alike: 405 with `Allow: POST` (the
/// 2026-07-28 answer), or 400 when `MCP-Protocol-Version` says the request speaks 2025-11-25.
#[tokio::test]
async fn get_and_delete_without_a_session_answer_in_the_era_they_speak() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let c = Client::new(&srv.url);
    for method in ["GET", "DELETE"] {
        let accept = vec![("accept".to_owned(), "text/event-stream".to_owned())];
        let x = c
            .send_with(method, accept.clone(), String::new(), None)
            .await;
        assert_eq!(x.status, 405, "{method} without a version: {}", x.body);
        assert_eq!(
            x.headers.get("allow").and_then(|v| v.to_str().ok()),
            Some("POST"),
            "{method}"
        );
        for version in ["2026-07-28", "not-a-version"] {
            let mut h = accept.clone();
            h.push(("mcp-protocol-version".into(), version.into()));
            let x = c.send_with(method, h, String::new(), None).await;
            assert_eq!(x.status, 405, "{method} speaking {version}: {}", x.body);
        }
        let mut h = accept.clone();
        h.push(("mcp-protocol-version".into(), "2025-11-25".into()));
        let x = c.send_with(method, h, String::new(), None).await;
        assert_eq!(x.status, 400, "{method} speaking 2025-11-25: {}", x.body);
        assert_eq!(x.error_code(), -32600, "{method}: {}", x.body);
        assert!(
            x.body.contains("Mcp-Session-Id"),
            "{method}: the error names the missing header: {}",
            x.body
        );
    }
}

#[tokio::test]
async fn a_session_belongs_to_the_principal_that_initialized_it() {
    let d = Deployment::new();
    let router = StreamableHttp::new(d.builder().build().unwrap())
        .into_router()
        .layer(axum::middleware::from_fn(as_user));
    let srv = start_router(router, "/mcp").await;
    let mut alice = LegacyClient::new(&srv.url);
    alice.extra = vec![("x-test-user".into(), "alice".into())];
    alice.initialize(json!({})).await;
    assert_eq!(alice.request(json!(1), "ping", json!({})).await.status, 200);
    let mut bob = alice.clone();
    bob.extra = vec![("x-test-user".into(), "bob".into())];
    assert_eq!(bob.request(json!(1), "ping", json!({})).await.status, 404);
    let mut nobody = alice.clone();
    nobody.extra.clear();
    assert_eq!(
        nobody.request(json!(1), "ping", json!({})).await.status,
        404
    );
    assert_eq!(bob.delete().await, 404, "bob cannot end alice's session");
    assert_eq!(alice.request(json!(2), "ping", json!({})).await.status, 200);
}

#[tokio::test]
async fn legacy_off_gives_todays_behaviour() {
    let d = Deployment::new();
    let on = d.replica().await;
    let session = LegacyClient::connect(&on.url, json!({})).await.session;
    let off = start(d.builder().legacy(false).build().unwrap()).await;
    let c = Client::new(&off.url);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"}}});
    let h = vec![("content-type".into(), "application/json".into())];
    let x = c.send(h.clone(), init.to_string(), None).await;
    assert_eq!((x.status, x.error_code()), (404, -32601));
    let mut with_session = h;
    with_session.push(("mcp-session-id".into(), session.unwrap()));
    with_session.push(("accept".into(), "text/event-stream".into()));
    for method in ["GET", "DELETE"] {
        let x = c
            .send_with(method, with_session.clone(), String::new(), None)
            .await;
        assert_eq!(x.status, 405, "{method}");
    }
}

#[tokio::test]
async fn requests_that_describe_themselves_as_2026_take_todays_path() {
    let d = Deployment::new();
    let srv = d.replica().await;
    let legacy = LegacyClient::connect(&srv.url, json!({})).await;
    let c = Client::new(&srv.url);
    // initialize, ping and setLevel with 2026 headers and _meta: removed methods (404).
    for method in ["initialize", "ping", "logging/setLevel"] {
        let x = c
            .request(
                method,
                json!(1),
                json!({"protocolVersion": "2025-11-25", "level": "info"}),
            )
            .await;
        assert_eq!((x.status, x.error_code()), (404, -32601), "{method}");
    }
    // A 2026 request carrying a session id is still a 2026 request.
    let (mut headers, body) = crate::support::request_parts("tools/list", json!(2), json!({}));
    headers.push(("mcp-session-id".into(), legacy.session.unwrap()));
    let x = c.send(headers, body, Some("tools/list")).await;
    assert_eq!(x.result()["resultType"], "complete");
    let _: &Value = x.result();
}

/// A session store that counts the recorded uses (`touch`) of the one it wraps.
#[derive(Default)]
struct CountingTouches {
    inner: stateless_mcp::backends::MemorySessionStore,
    touches: std::sync::atomic::AtomicUsize,
}

impl stateless_mcp::extend::SessionStore for CountingTouches {
    fn load<'a>(
        &'a self,
        session: &'a str,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<stateless_mcp::extend::SessionSettings, stateless_mcp::Error>,
    > {
        self.inner.load(session)
    }
    fn set_log_level<'a>(
        &'a self,
        session: &'a str,
        level: stateless_mcp::protocol::LoggingLevel,
        expires: std::time::SystemTime,
    ) -> futures_util::future::BoxFuture<'a, Result<(), stateless_mcp::Error>> {
        self.inner.set_log_level(session, level, expires)
    }
    fn subscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
        expires: std::time::SystemTime,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, stateless_mcp::Error>> {
        self.inner.subscribe(session, uri, expires)
    }
    fn unsubscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<(), stateless_mcp::Error>> {
        self.inner.unsubscribe(session, uri)
    }
    fn touch<'a>(
        &'a self,
        session: &'a str,
        at: std::time::SystemTime,
        expires: std::time::SystemTime,
    ) -> futures_util::future::BoxFuture<'a, Result<(), stateless_mcp::Error>> {
        self.touches
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.touch(session, at, expires)
    }
    fn revoke<'a>(
        &'a self,
        session: &'a str,
        expires: std::time::SystemTime,
    ) -> futures_util::future::BoxFuture<'a, Result<(), stateless_mcp::Error>> {
        self.inner.revoke(session, expires)
    }
}

/// Sliding expiry across two replicas: a session used every 100 ms outlives its 2 s idle
/// limit (with a bounded number of store writes, one per half idle limit at most), an idle
/// one gets 404, and the 8 s hard limit ends even the busy one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_in_use_stay_alive_idle_ones_end_and_the_hard_limit_holds() {
    let store = std::sync::Arc::new(CountingTouches::default());
    let mut d = Deployment::new();
    d.store = store.clone();
    let build = || {
        d.builder()
            .session_idle(Duration::from_secs(2))
            .session_ttl(Duration::from_secs(8))
            .build()
            .unwrap()
    };
    let (a, b) = (start(build()).await, start(build()).await);
    let busy = LegacyClient::connect(&a.url, json!({})).await;
    let idle = LegacyClient::connect(&a.url, json!({})).await;
    let issued = std::time::Instant::now();
    let clients = [busy.clone(), busy.at(&b.url)];
    let mut requests = 0usize;
    // 5 s of use, alternating replicas: two and a half idle limits.
    while issued.elapsed() < Duration::from_secs(5) {
        let x = clients[requests % 2]
            .request(json!(requests), "ping", json!({}))
            .await;
        assert_eq!(
            x.status,
            200,
            "request {requests} at {:?}: {}",
            issued.elapsed(),
            x.body
        );
        requests += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let writes = store.touches.load(std::sync::atomic::Ordering::SeqCst);
    println!(
        "[sliding-expiry] {requests} requests over 5 s, {writes} session-store writes (idle limit 2 s)"
    );
    // One write once half the idle limit (1 s) passed since the last: about 5 in 5 s (the
    // first may come at once, the issue time being whole seconds), never one per request.
    assert!(
        (3..=7).contains(&writes),
        "{writes} refresh writes for {requests} requests"
    );
    // Unused for 5 s > 2 s: gone, on either replica.
    for c in [idle.clone(), idle.at(&b.url)] {
        let x = c.request(json!(1), "ping", json!({})).await;
        assert_eq!(x.status, 404, "an idle session: {}", x.body);
    }
    // The hard limit (8 s from initialize, whole seconds) ends the busy session too.
    let c = &clients[0];
    crate::support::eventually(
        Duration::from_secs(8),
        "the hard limit did not end a session in use",
        move || async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c.request(json!(9), "ping", json!({})).await.status == 404
        },
    )
    .await;
    let ended = issued.elapsed();
    println!("[sliding-expiry] the busy session ended after {ended:?} (hard limit 8 s)");
    assert!(ended > Duration::from_secs(6), "ended early: {ended:?}");
}

//! The HTTP layer around the ladder: methods, negotiation, limits, Host/Origin guards,
//! session headers, SSE replies for progress and logs, and mounting inside a larger app.

use serde_json::{Value, json};
use stateless_mcp::StreamableHttp;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::support::{
    Client, Exchange, TestServer, VERSION, checked_messages, fixtures_server, schema, start,
    start_http, start_router, with_meta,
};

/// A reply read off a raw socket, its messages checked against the schema.
struct RawReply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    messages: Vec<Value>,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = find(b, b"\r\n") {
        let size_text = std::str::from_utf8(&b[..eol]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        b = &b[eol + 2..];
        if size == 0 {
            break;
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
    out
}

/// POSTs `body` over a plain socket with exactly these header lines (plus `Host`,
/// `Content-Length` and `Connection: close`), so names keep their case and no header is
/// added by an HTTP client library.
async fn raw_post(
    srv: &TestServer,
    headers: &[(&str, &str)],
    body: &str,
    method: Option<&str>,
) -> RawReply {
    let rest = srv.url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    let mut sock = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    sock.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    sock.read_to_end(&mut raw).await.unwrap();
    let split = find(&raw, b"\r\n\r\n").expect("a complete response head");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let header = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let payload = &raw[split + 4..];
    let payload = if header("transfer-encoding").contains("chunked") {
        dechunk(payload)
    } else {
        payload.to_vec()
    };
    let body = String::from_utf8(payload).unwrap();
    let messages = checked_messages(header("content-type"), &body, method);
    RawReply {
        status,
        headers,
        body,
        messages,
    }
}

fn body(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": with_meta(params)}).to_string()
}

fn list_body() -> String {
    body(json!(1), "tools/list", json!({}))
}

/// The standard `tools/list` headers with `name` set to `value` (removed when `None`).
fn list_headers_with(name: &str, value: Option<&str>) -> Vec<(String, String)> {
    let mut h = Client::headers("tools/list", None);
    h.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        h.push((name.to_owned(), v.to_owned()));
    }
    h
}

async fn list_with(c: &Client, name: &str, value: Option<&str>) -> Exchange {
    c.send(
        list_headers_with(name, value),
        list_body(),
        Some("tools/list"),
    )
    .await
}

fn assert_tools_listed(x: &Exchange) {
    assert_eq!(x.status, 200, "{}", x.body);
    assert!(x.result()["tools"].is_array(), "{}", x.body);
}

fn header<'a>(x: &'a Exchange, name: &str) -> &'a str {
    x.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn get_and_delete_are_405_with_allow_post() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    for method in ["GET", "DELETE", "PUT"] {
        let h = vec![("accept".into(), "text/event-stream".into())];
        let x = c.send_with(method, h, String::new(), None).await;
        assert_eq!(x.status, 405, "{method}: {}", x.body);
        assert_eq!(header(&x, "allow"), "POST", "{method}");
    }
}

#[tokio::test]
async fn accept_without_json_is_406() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    for accept in [
        "text/html",
        "text/event-stream",
        "application/json;q=0, text/event-stream",
    ] {
        let x = list_with(&c, "accept", Some(accept)).await;
        assert_eq!(x.status, 406, "{accept}: {}", x.body);
    }
}

#[tokio::test]
async fn accept_json_only_gets_json_without_notifications() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    assert_tools_listed(&list_with(&c, "accept", Some("application/json")).await);
    let mut h = Client::headers("tools/call", Some("test_tool_with_progress"));
    h.retain(|(k, _)| k != "accept");
    h.push(("accept".into(), "application/json".into()));
    let params = json!({"name": "test_tool_with_progress", "arguments": {},
        "_meta": {"progressToken": "p-json"}});
    let x = c
        .send(h, body(json!(2), "tools/call", params), Some("tools/call"))
        .await;
    assert_eq!(x.status, 200, "{}", x.body);
    assert!(x.content_type().starts_with("application/json"), "{x:?}");
    assert_eq!(x.messages.len(), 1, "{}", x.body);
    assert_eq!(x.result()["content"][0]["text"], "p-json");
}

#[tokio::test]
async fn no_accept_header_is_accepted() {
    let srv = start(fixtures_server()).await;
    let h = [
        ("content-type", "application/json"),
        ("mcp-protocol-version", VERSION),
        ("mcp-method", "tools/list"),
    ];
    let r = raw_post(&srv, &h, &list_body(), Some("tools/list")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let ct = r.headers.iter().find(|(k, _)| k == "content-type");
    assert!(
        ct.is_some_and(|(_, v)| v.starts_with("application/json")),
        "{ct:?}"
    );
    assert!(r.messages[0]["result"]["tools"].is_array(), "{}", r.body);
}

#[tokio::test]
async fn non_json_content_type_is_415() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let x = list_with(&c, "content-type", Some(ct)).await;
        assert_eq!(x.status, 415, "{ct}: {}", x.body);
    }
    let x = list_with(&c, "content-type", Some("application/json; charset=utf-8")).await;
    assert_tools_listed(&x);
}

async fn small_limit_server() -> TestServer {
    start_http(StreamableHttp::new(fixtures_server()).body_limit(1024)).await
}

/// A well-formed `echo` call whose body is about `size` bytes.
fn echo_body(size: usize) -> String {
    body(
        json!(3),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x".repeat(size)}}),
    )
}

#[tokio::test]
async fn body_over_limit_with_content_length_is_413() {
    let srv = small_limit_server().await;
    let c = Client::new(&srv.url);
    let h = Client::headers("tools/call", Some("echo"));
    let x = c.send(h.clone(), echo_body(100), Some("tools/call")).await;
    assert_eq!(x.status, 200, "under the limit: {}", x.body);
    let x = c.send(h, echo_body(4096), Some("tools/call")).await;
    assert_eq!(x.status, 413, "{}", x.body);
}

#[tokio::test]
async fn chunked_body_over_limit_is_413() {
    let srv = small_limit_server().await;
    let c = Client::new(&srv.url);
    for (size, expected) in [(100, 200), (4096, 413)] {
        let bytes = bytes::Bytes::from(echo_body(size));
        let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = bytes
            .chunks(256)
            .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
            .collect();
        let mut req =
            c.http
                .post(&srv.url)
                .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
                    chunks,
                )));
        for (k, v) in Client::headers("tools/call", Some("echo")) {
            req = req.header(k, v);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status().as_u16(), expected, "{size} bytes, chunked");
        let text = resp.text().await.unwrap();
        let reply: Value = serde_json::from_str(&text).unwrap();
        schema::check_message(&reply, Some("tools/call"));
    }
}

#[tokio::test]
async fn foreign_host_is_403() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let x = list_with(&c, "host", Some("evil.example.com")).await;
    assert_eq!(x.status, 403, "{}", x.body);
    let port = srv.addr.port().to_string();
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        assert_tools_listed(&list_with(&c, "host", Some(&host)).await);
    }
}

#[tokio::test]
async fn foreign_origin_is_403_and_localhost_origin_is_accepted() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    for origin in [
        "http://evil.example.com",
        "null",
        "http://localhost.evil.com",
    ] {
        let x = list_with(&c, "origin", Some(origin)).await;
        assert_eq!(x.status, 403, "{origin}: {}", x.body);
    }
    for origin in [
        "http://localhost:1234",
        "http://127.0.0.1:9",
        "https://localhost",
    ] {
        assert_tools_listed(&list_with(&c, "origin", Some(origin)).await);
    }
}

#[tokio::test]
async fn configured_allowlists_accept_their_entries_only() {
    let http = StreamableHttp::new(fixtures_server())
        .allowed_hosts(["mcp.example.com"])
        .allowed_origins(["https://app.example.com"]);
    let srv = start_http(http).await;
    let c = Client::new(&srv.url);
    assert_tools_listed(&list_with(&c, "host", Some("mcp.example.com")).await);
    assert_tools_listed(&list_with(&c, "host", Some("mcp.example.com:443")).await);
    for host in ["localhost", "other.example.com"] {
        let x = list_with(&c, "host", Some(host)).await;
        assert_eq!(x.status, 403, "{host}: {}", x.body);
    }
    let mut h = list_headers_with("host", Some("mcp.example.com"));
    h.push(("origin".into(), "https://app.example.com".into()));
    assert_tools_listed(&c.send(h, list_body(), Some("tools/list")).await);
    for origin in [
        "http://app.example.com",
        "https://evil.example.com",
        "http://localhost:1234",
    ] {
        let mut h = list_headers_with("host", Some("mcp.example.com"));
        h.push(("origin".into(), origin.into()));
        let x = c.send(h, list_body(), Some("tools/list")).await;
        assert_eq!(x.status, 403, "{origin}: {}", x.body);
    }
}

#[tokio::test]
async fn allow_any_host_still_checks_origin() {
    let srv = start_http(StreamableHttp::new(fixtures_server()).allow_any_host()).await;
    let c = Client::new(&srv.url);
    assert_tools_listed(&list_with(&c, "host", Some("evil.example.com")).await);
    let mut h = list_headers_with("host", Some("evil.example.com"));
    h.push(("origin".into(), "http://evil.example.com".into()));
    let x = c.send(h, list_body(), Some("tools/list")).await;
    assert_eq!(x.status, 403, "{}", x.body);
}

#[tokio::test]
async fn session_id_is_ignored_and_never_minted() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let plain = list_with(&c, "accept", Some("application/json, text/event-stream")).await;
    assert_tools_listed(&plain);
    assert!(plain.headers.get("mcp-session-id").is_none(), "{plain:?}");
    let x = list_with(&c, "mcp-session-id", Some("a-stale-session")).await;
    assert_tools_listed(&x);
    assert!(x.headers.get("mcp-session-id").is_none(), "{x:?}");
    // A bare notification (no version header, no `_meta`) with a session id is a legacy
    // client's: an unknown session is 404 there. With legacy support off, it is accepted.
    let cancelled = || {
        (
            vec![
                ("content-type".to_owned(), "application/json".to_owned()),
                ("mcp-session-id".to_owned(), "s".to_owned()),
            ],
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1}})
            .to_string(),
        )
    };
    let (h, body) = cancelled();
    assert_eq!(c.send(h, body, None).await.status, 404);
    let off = start(
        stateless_mcp::fixtures::conformance(stateless_mcp::fixtures::demo(
            stateless_mcp::Server::builder().legacy(false),
        ))
        .build()
        .unwrap(),
    )
    .await;
    let (h, body) = cancelled();
    let x = Client::new(&off.url).send(h, body, None).await;
    assert_eq!(x.status, 202);
    assert!(x.headers.get("mcp-session-id").is_none(), "{x:?}");
}

#[tokio::test]
async fn last_event_id_is_ignored() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let x = list_with(&c, "last-event-id", Some("42")).await;
    assert_tools_listed(&x);
    assert_eq!(x.messages.len(), 1, "{}", x.body);
}

async fn call_progress_tool(c: &Client, token: Option<Value>) -> Exchange {
    let mut params = json!({"name": "test_tool_with_progress", "arguments": {}});
    if let Some(t) = token {
        params["_meta"] = json!({"progressToken": t});
    }
    c.request("tools/call", json!("prog"), params).await
}

#[tokio::test]
async fn progress_streams_as_sse_before_the_response() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    for token in [json!("tok-1"), json!(7), json!(0)] {
        let x = call_progress_tool(&c, Some(token.clone())).await;
        assert_eq!(x.status, 200, "{}", x.body);
        assert!(x.content_type().starts_with("text/event-stream"), "{x:?}");
        assert_eq!(header(&x, "x-accel-buffering"), "no");
        let (last, before) = x.messages.split_last().unwrap();
        assert_eq!(last["id"], "prog", "the response comes last: {}", x.body);
        assert!(last.get("result").is_some(), "{last}");
        assert!(before.len() >= 2, "progress expected: {}", x.body);
        let mut previous = f64::NEG_INFINITY;
        for n in before {
            assert_eq!(n["method"], "notifications/progress", "{n}");
            assert_eq!(n["params"]["progressToken"], token, "token type kept: {n}");
            let p = n["params"]["progress"].as_f64().unwrap();
            assert!(p > previous, "progress must increase: {}", x.body);
            previous = p;
        }
    }
}

#[tokio::test]
async fn without_progress_token_the_reply_is_plain_json() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let x = call_progress_tool(&c, None).await;
    assert_eq!(x.status, 200, "{}", x.body);
    assert!(x.content_type().starts_with("application/json"), "{x:?}");
    assert!(x.notifications().is_empty(), "{}", x.body);
    assert_eq!(x.result()["content"][0]["text"], "no progress token");
}

async fn call_logging_tool(c: &Client, level: Option<&str>) -> Exchange {
    let mut params = json!({"name": "test_logging_tool", "arguments": {}});
    if let Some(l) = level {
        params["_meta"] = json!({"io.modelcontextprotocol/logLevel": l});
    }
    c.request("tools/call", json!("log"), params).await
}

#[tokio::test]
async fn log_messages_only_when_a_low_enough_level_is_set() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let d = c.request("server/discover", json!(0), Value::Null).await;
    assert!(
        d.result()["capabilities"]["logging"].is_object(),
        "{}",
        d.body
    );
    for level in ["debug", "info"] {
        let x = call_logging_tool(&c, Some(level)).await;
        assert_eq!(x.status, 200, "{}", x.body);
        assert!(x.content_type().starts_with("text/event-stream"), "{x:?}");
        let logs = x.notifications();
        assert_eq!(logs.len(), 1, "{level}: {}", x.body);
        assert_eq!(logs[0]["method"], "notifications/message");
        assert_eq!(logs[0]["params"]["level"], "info");
        assert_eq!(x.response()["id"], "log");
        assert!(x.response().get("result").is_some(), "{}", x.body);
    }
    for level in [Some("error"), Some("warning"), None] {
        let x = call_logging_tool(&c, level).await;
        assert_eq!(x.status, 200, "{}", x.body);
        assert!(x.notifications().is_empty(), "{level:?}: {}", x.body);
        assert!(x.content_type().starts_with("application/json"), "{x:?}");
    }
}

#[tokio::test]
async fn merged_router_serves_both_routes() {
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(
            StreamableHttp::new(fixtures_server())
                .path("/api/mcp")
                .into_router(),
        );
    let srv = start_router(app, "/api/mcp").await;
    assert!(srv.url.ends_with("/api/mcp"));
    let c = Client::new(&srv.url);
    assert_tools_listed(&c.request("tools/list", json!(1), json!({})).await);
    let base = srv.url.trim_end_matches("/api/mcp");
    let health = c.http.get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    assert_eq!(health.text().await.unwrap(), "ok");
    let elsewhere = c.http.post(format!("{base}/mcp")).send().await.unwrap();
    assert_eq!(elsewhere.status().as_u16(), 404);
}

#[tokio::test]
async fn header_names_in_any_case_are_accepted() {
    let srv = start(fixtures_server()).await;
    let params = json!({"name": "echo", "arguments": {"text": "hi"}});
    let payload = body(json!(17), "tools/call", params);
    for (pv, m, n) in [
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD", "MCP-NAME"),
        ("mcp-protocol-version", "mcp-method", "mcp-name"),
        ("Mcp-Protocol-Version", "mCp-MeThOd", "Mcp-Name"),
    ] {
        let h = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            (pv, VERSION),
            (m, "tools/call"),
            (n, "echo"),
        ];
        let r = raw_post(&srv, &h, &payload, Some("tools/call")).await;
        assert_eq!(r.status, 200, "{pv}/{m}/{n}: {}", r.body);
        assert_eq!(r.messages[0]["result"]["content"][0]["text"], "hi");
    }
}

#[tokio::test]
async fn whitespace_around_header_values_is_trimmed() {
    let srv = start(fixtures_server()).await;
    let params = json!({"name": "test_custom_headers", "arguments": {"region": "eu"}});
    let payload = body(json!(18), "tools/call", params);
    let h = [
        ("content-type", "application/json"),
        ("mcp-protocol-version", "  2026-07-28\t"),
        ("mcp-method", "\t tools/call  "),
        ("mcp-name", "   test_custom_headers "),
        ("mcp-param-region", "  eu\t"),
    ];
    let r = raw_post(&srv, &h, &payload, Some("tools/call")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.messages[0]["result"]["content"][0]["text"], "region: eu");
}

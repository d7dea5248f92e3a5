//! Connection and load limits of the reference binary, probed over real sockets: request
//! heads over the limit (431), slow heads (closed) and slow bodies (408), idle keep-alive
//! connections (closed) while listen streams stay open, connections beyond the bound
//! (503), requests beyond the in-flight bound (503) and callers over their rate (429 with
//! the request id). Each refusal is also counted in `mcp_http_refusals_total`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::listen::Listener;
use crate::support::process::{ServerProcess, spawn_server};
use crate::support::{Client, checked_messages, get, request_parts};

/// The binary with `args` (from a blocking thread: it waits for the address).
async fn binary(args: &[&str]) -> ServerProcess {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        spawn_server(&args)
    })
    .await
    .unwrap()
}

async fn connect(server: &ServerProcess) -> TcpStream {
    TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap()
}

/// A well-formed HTTP/1.1 `tools/call` of `echo`, as raw bytes, with `extra` header lines.
fn raw_echo(port: u16, extra: &str) -> Vec<u8> {
    let (headers, body) = request_parts(
        "tools/call",
        json!(1),
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let mut head = format!("POST /mcp HTTP/1.1\r\nhost: localhost:{port}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(extra);
    head.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    head.into_bytes()
}

/// Reads one HTTP/1.1 response with a `content-length` body: status line, headers, body.
async fn read_response(tcp: &mut TcpStream) -> (String, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_owned)
                })
                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
            if body.len() >= len {
                return (head.to_owned(), body[..len].to_owned());
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut chunk))
            .await
            .expect("a response within 10 s")
            .unwrap();
        assert!(n > 0, "connection closed before a full response: {text:?}");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Whether the server closes `tcp` within `within` (reads nothing but EOF or a reset).
async fn closed_within(tcp: &mut TcpStream, within: Duration) -> bool {
    let mut chunk = [0u8; 1024];
    match tokio::time::timeout(within, tcp.read(&mut chunk)).await {
        Ok(Ok(0)) | Ok(Err(_)) => true,
        Ok(Ok(n)) => panic!(
            "unexpected bytes: {:?}",
            String::from_utf8_lossy(&chunk[..n])
        ),
        Err(_) => false,
    }
}

/// The value of `mcp_http_refusals_total{reason="…"}` on `/metrics`.
async fn refusals(server: &ServerProcess, reason: &str) -> u64 {
    // 0 when /metrics is not served (its connection refused at the connection bound).
    let Ok(r) = get(format!("{}/metrics", server.base)).await else {
        return 0;
    };
    if r.status() != 200 {
        return 0;
    }
    let text = r.text().await.unwrap();
    let prefix = format!("mcp_http_refusals_total{{reason=\"{reason}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0, |v| v.trim().parse().unwrap())
}

/// A refusal's body: one schema-valid JSON-RPC error.
fn error_of(body: &str) -> Value {
    let m = checked_messages("application/json", body, None);
    assert_eq!(m.len(), 1, "{body}");
    assert!(m[0]["error"]["code"].is_i64(), "{body}");
    m[0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn request_heads_over_the_limit_get_431_and_smaller_ones_are_served() {
    let server = binary(&["--max-header-bytes", "8192"]).await;
    let mut tcp = connect(&server).await;
    tcp.write_all(&raw_echo(
        server.port,
        &format!("x-pad: {}\r\n", "a".repeat(4096)),
    ))
    .await
    .unwrap();
    let (head, body) = read_response(&mut tcp).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    error_or_result(&body);

    let mut tcp = connect(&server).await;
    let big = format!("x-pad: {}\r\n", "a".repeat(64 * 1024));
    // The server may answer and close before it has read everything we send.
    let _ = tcp.write_all(&raw_echo(server.port, &big)).await;
    let (head, _) = read_response(&mut tcp).await;
    assert!(head.starts_with("HTTP/1.1 431"), "{head}");
    assert!(closed_within(&mut tcp, Duration::from_secs(5)).await);
    assert_eq!(refusals(&server, "header_too_large").await, 1);

    // HTTP/2 (h2c): a header list a little over the limit is refused with 431 (one far over
    // it ends the connection: GOAWAY ENHANCE_YOUR_CALM).
    let h2 = crate::support::http_builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let (headers, body) = request_parts("tools/list", json!(2), json!({}));
    let mut req = h2.post(&server.url).body(body);
    for (k, v) in &headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let r = req.header("x-pad", "a".repeat(9000)).send().await.unwrap();
    assert_eq!(r.status(), 431);

    // Over 4× the limit h2 stops decoding the header block (its fixed abuse threshold): the
    // connection's HPACK state is then lost, so it ends the connection (GOAWAY) instead of
    // answering. The client sees a failed request, not a response.
    let (headers, body) = request_parts("tools/list", json!(3), json!({}));
    let mut req = h2.post(&server.url).body(body);
    for (k, v) in &headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let far = req
        .header("x-pad", "a".repeat(4 * 8192 + 1024))
        .send()
        .await;
    assert!(far.is_err(), "no answer far over the limit: {far:?}");
}

fn error_or_result(body: &str) {
    let m = checked_messages("application/json", body, Some("tools/call"));
    assert_eq!(m[0]["result"]["content"][0]["text"], "hi", "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_head_trickling_in_is_cut_off_at_the_header_timeout() {
    let server = binary(&["--header-timeout-secs", "1"]).await;
    let mut tcp = connect(&server).await;
    tcp.write_all(b"POST /mcp HTTP/1.1\r\n").await.unwrap();
    let started = Instant::now();
    let mut closed = false;
    // One header line every 200 ms, never the end of the head.
    for i in 0..50 {
        if tcp
            .write_all(format!("x-slow-{i}: a\r\n").as_bytes())
            .await
            .is_err()
        {
            closed = true;
            break;
        }
        if closed_within(&mut tcp, Duration::from_millis(200)).await {
            closed = true;
            break;
        }
    }
    assert!(closed, "still open after {:?}", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(refusals(&server, "header_timeout").await, 1);

    // A connection that sends nothing at all is closed too.
    let mut silent = connect(&server).await;
    assert!(closed_within(&mut silent, Duration::from_secs(8)).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_does_not_arrive_in_time_gets_408() {
    let server = binary(&["--body-timeout-secs", "1"]).await;
    let mut tcp = connect(&server).await;
    let full = raw_echo(server.port, "");
    // Everything but the last 10 bytes of the body.
    tcp.write_all(&full[..full.len() - 10]).await.unwrap();
    let (head, body) = read_response(&mut tcp).await;
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    let error = error_of(&body);
    assert_eq!(error["error"]["code"], -32600, "{body}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not arrive"),
        "{body}"
    );
    assert_eq!(refusals(&server, "body_timeout").await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_connections_close_while_listen_streams_stay_open() {
    let server = binary(&[
        "--idle-timeout-secs",
        "1",
        "--keepalive-secs",
        "1",
        "--fixtures",
        "conformance",
    ])
    .await;
    let client = Client::new(&server.url);
    let mut listener = Listener::open(&client, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(listener.status, 200);
    assert_eq!(
        listener.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );

    // A keep-alive connection that served one request and then sits idle is closed.
    let mut tcp = connect(&server).await;
    tcp.write_all(&raw_echo(server.port, "")).await.unwrap();
    let (head, body) = read_response(&mut tcp).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    error_or_result(&body);
    assert!(closed_within(&mut tcp, Duration::from_secs(5)).await);

    // Three idle timeouts later, the listen stream still delivers. Each timeout is seen
    // happen: a connection left idle after its request, closed by the server.
    for _ in 0..3 {
        let mut idle = connect(&server).await;
        idle.write_all(&raw_echo(server.port, "")).await.unwrap();
        let (head, _) = read_response(&mut idle).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(closed_within(&mut idle, Duration::from_secs(5)).await);
    }
    client.trigger_tool_change(json!(2)).await;
    assert_eq!(
        listener.next_kind().await,
        "notifications/tools/list_changed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_beyond_the_bound_get_503_and_a_freed_slot_is_reused() {
    let server = binary(&["--max-connections", "2"]).await;
    let first = connect(&server).await;
    let mut second = connect(&server).await;
    // Both are served (the second proves its slot was taken).
    second.write_all(&raw_echo(server.port, "")).await.unwrap();
    let (head, _) = read_response(&mut second).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    let mut third = connect(&server).await;
    let (head, body) = read_response(&mut third).await;
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );
    error_of(&body);
    assert!(closed_within(&mut third, Duration::from_secs(5)).await);

    drop(first);
    // The slot comes back once the server sees the close.
    let mut served = false;
    for _ in 0..50 {
        let mut again = connect(&server).await;
        let _ = again.write_all(&raw_echo(server.port, "")).await;
        let (head, _) = read_response(&mut again).await;
        if head.starts_with("HTTP/1.1 200") {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(served, "a freed slot is reused");
    // Free the slots so that /metrics itself is served.
    drop(second);
    let mut counted = 0;
    for _ in 0..50 {
        counted = refusals(&server, "too_many_connections").await;
        if counted >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(counted >= 1, "the refusals are counted");
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_beyond_the_in_flight_bound_get_503_but_listen_streams_open() {
    let server = binary(&["--max-in-flight", "1", "--fixtures", "conformance"]).await;
    let client = Client::new(&server.url);
    let start_slow = || {
        let client = Client::new(&server.url);
        tokio::spawn(async move {
            client
                .request(
                    "tools/call",
                    json!("slow"),
                    json!({"name": "sleep", "arguments": {"ms": 3000}}),
                )
                .await
        })
    };
    // Until the slow call is in flight, a quick one may still pass; while it is (3 s, or
    // longer on a loaded machine), one must be refused. A probe that holds the one slot when
    // the slow call arrives gets the slow call refused instead: then it is sent again.
    let mut refused = None;
    let mut slow = start_slow();
    for _ in 0..20 {
        while !slow.is_finished() {
            let (headers, body) = request_parts("tools/list", json!(3), json!({}));
            let r = client.post_raw(&headers, body).await;
            if r.status() == 503 {
                refused = Some(r);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if refused.is_some() {
            break;
        }
        let early = (&mut slow).await.unwrap();
        assert_eq!(
            early.status, 503,
            "the slow call ended early: {}",
            early.body
        );
        slow = start_slow();
    }
    let r = refused.expect("a request beyond the bound is refused");
    assert_eq!(r.headers()["retry-after"], "1");
    let error = error_of(&r.text().await.unwrap());
    assert!(error["error"]["message"].as_str().unwrap().contains("busy"));

    // Listen streams are not counted.
    let mut listener = Listener::open(&client, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(listener.status, 200);
    assert_eq!(
        listener.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );

    let done = slow.await.unwrap();
    assert_eq!(done.status, 200, "{}", done.body);
    let after = client.request("tools/list", json!(4), json!({})).await;
    assert_eq!(after.status, 200);
    assert!(refusals(&server, "overloaded").await >= 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn callers_over_their_rate_get_429_with_the_request_id() {
    let server = binary(&[
        "--rate-limit",
        "1",
        "--rate-limit-burst",
        "2",
        "--rate-limit-header",
        "x-forwarded-for",
    ])
    .await;
    let client = Client::new(&server.url);
    let send = |from: &'static str, id: i64| {
        let client = &client;
        async move {
            let (mut headers, body) = request_parts("tools/list", json!(id), json!({}));
            headers.push(("x-forwarded-for".into(), format!("203.0.113.50, {from}")));
            client.post_raw(&headers, body).await
        }
    };
    assert_eq!(send("198.51.100.1", 1).await.status(), 200);
    assert_eq!(send("198.51.100.1", 2).await.status(), 200);
    let r = send("198.51.100.1", 3).await;
    assert_eq!(r.status(), 429);
    let secs: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&secs), "{secs}");
    let error = error_of(&r.text().await.unwrap());
    assert_eq!(error["id"], 3, "the request id is echoed");
    assert_eq!(error["error"]["data"]["reason"], "rate_limited");
    // Another client address has its own budget; the first entry of the header is ignored.
    assert_eq!(send("198.51.100.2", 4).await.status(), 200);
    assert_eq!(refusals(&server, "rate_limited").await, 1);
}

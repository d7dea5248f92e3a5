//! Cross-replica answer latency of a legacy (2025-11-25) server-to-client request, measured
//! on the real binary with a real Redis bus and session store.
//!
//! ```text
//! cargo build --release && cargo bench --bench legacy_answer_latency -- [--rounds 1000] [--warmup 50]
//! ```
//!
//! Starts `redis-server` and two replicas of `target/release/stateless-mcp --fixtures
//! conformance --bus redis://… --session-store redis://…` sharing one `--state-keys` ring
//! (A and B), and initializes one legacy session on A. Each round calls
//! `test_input_required_result_elicitation` on A as an SSE stream, reads the
//! `elicitation/create` request from it, then POSTs the answer to B and waits for the call's
//! result on A's stream. Latency: from writing the answer to B until the result's line is read
//! from A (B acknowledges with 202 and forwards the answer over Redis, A resumes the handler
//! with it and writes the result). For comparison it then measures the same with the answer
//! POSTed to A itself, and on one replica with the in-process bus and session store
//! (`--bus memory`). Prints p50/p90/p99/max. Loopback only; needs `redis-server` on `PATH`.

#[path = "support/procs.rs"]
mod procs;

use std::time::{Duration, Instant};

use procs::{Rounds, redis, replica, replica_pair, report};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// The `requestState`/session key ring both replicas share.
const STATE_KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const TOOL: &str = "test_input_required_result_elicitation";

/// An HTTP/1.1 POST of `body` to `/mcp` on `port`, with the legacy headers (and the session
/// id, once there is one).
fn post(port: u16, session: Option<&str>, body: &str) -> String {
    let session = session.map_or(String::new(), |s| {
        format!("MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {s}\r\n")
    });
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// One HTTP/1.1 connection to a replica.
struct Conn {
    reader: BufReader<TcpStream>,
    port: u16,
}

impl Conn {
    async fn open(port: u16) -> Conn {
        let tcp = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        tcp.set_nodelay(true).unwrap();
        Conn {
            reader: BufReader::new(tcp),
            port,
        }
    }

    async fn send(&mut self, session: Option<&str>, body: &str) {
        let req = post(self.port, session, body);
        self.reader
            .get_mut()
            .write_all(req.as_bytes())
            .await
            .expect("send");
    }

    /// Reads the status line and headers: the status code, the session id header if any,
    /// and the `Content-Length` if any.
    async fn head(&mut self) -> (u16, Option<String>, Option<usize>) {
        let mut line = String::new();
        self.reader.read_line(&mut line).await.expect("status");
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP answer: {line:?}"));
        let (mut session, mut length) = (None, None);
        loop {
            line.clear();
            self.reader.read_line(&mut line).await.expect("header");
            let l = line.trim_end();
            if l.is_empty() {
                return (status, session, length);
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().ok();
                } else if k.eq_ignore_ascii_case("mcp-session-id") {
                    session = Some(v.trim().to_owned());
                }
            }
        }
    }

    /// Reads a `Content-Length` body.
    async fn body(&mut self, length: Option<usize>) -> String {
        let mut body = vec![0; length.expect("a Content-Length answer")];
        self.reader.read_exact(&mut body).await.expect("body");
        String::from_utf8(body).expect("UTF-8")
    }

    /// Reads lines until an SSE `data:` line containing `needle`; its JSON.
    async fn data_with(&mut self, needle: &str) -> serde_json::Value {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).await.expect("read");
            assert!(n > 0, "stream closed before {needle}");
            if let Some(data) = line.trim_end().strip_prefix("data:")
                && data.contains(needle)
            {
                return serde_json::from_str(data.trim()).expect("SSE data is JSON");
            }
        }
    }
}

/// `initialize` + `notifications/initialized` on `port`: the session id.
async fn initialize(port: u16) -> String {
    let mut c = Conn::open(port).await;
    c.send(
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"bench","version":"1.0.0"}}}"#,
    )
    .await;
    let (status, session, length) = c.head().await;
    let body = c.body(length).await;
    assert_eq!(status, 200, "initialize: {body}");
    let session = session.expect("initialize issued an Mcp-Session-Id");
    c.send(
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    let (status, _, length) = c.head().await;
    c.body(length.or(Some(0))).await;
    assert_eq!(status, 202, "notifications/initialized");
    session
}

/// Timed answers: call on `call`, answer on `answer`.
async fn measure(session: &str, call: u16, answer: u16, rounds: Rounds) -> Vec<Duration> {
    let mut answers = Conn::open(answer).await;
    rounds
        .measure(async |i| {
            let mut stream = Conn::open(call).await;
            let id = i + 1;
            stream
                .send(
                    Some(session),
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{TOOL}","arguments":{{}}}}}}"#
                    ),
                )
                .await;
            let (status, _, _) = stream.head().await;
            assert_eq!(status, 200, "tools/call");
            let request = stream.data_with("elicitation/create").await;
            let answer = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"name":"Ada"}}}}}}"#,
                request["id"]
            );
            let started = Instant::now();
            answers.send(Some(session), &answer).await;
            let result = stream.data_with("Hello, Ada!").await;
            let took = started.elapsed();
            assert_eq!(result["id"], id, "{result}");
            let (status, _, length) = answers.head().await;
            answers.body(length.or(Some(0))).await;
            assert_eq!(status, 202, "the answer POST");
            took
        })
        .await
}

#[tokio::main]
async fn main() {
    let rounds = Rounds::from_args("--rounds", 1000, 50);

    let redis = redis().await;
    let shared = [
        "--bus",
        redis.url.as_str(),
        "--session-store",
        redis.url.as_str(),
        "--state-keys",
        STATE_KEYS,
    ];
    let (a, b) = replica_pair(&shared).await;
    let session = initialize(a.port).await;
    let cross = measure(&session, a.port, b.port, rounds).await;
    report("redis, call on A, answer POSTed to B", "answers", &cross);
    let same = measure(&session, a.port, a.port, rounds).await;
    report("redis, call on A, answer POSTed to A", "answers", &same);
    drop((a, b, redis));

    let solo = replica(&["--bus", "memory"]).await;
    let session = initialize(solo.port).await;
    let local = measure(&session, solo.port, solo.port, rounds).await;
    report("memory bus and store, one replica", "answers", &local);
}

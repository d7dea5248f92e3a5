//! The soak's requests, through nginx: 2026-07-28 tool calls, paged `tools/list`, two-round
//! MRTR calls (`requestState` sealed by one replica, answered on whichever nginx picks),
//! a trigger that publishes `tools/list_changed` over the bus, `subscriptions/listen`
//! streams that open, hear those notifications and close, and 2025-11-25 sessions
//! (initialize, a call, DELETE). Each answer is checked for its shape; anything else is a
//! failure recorded by kind.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::record::{Recorder, STREAM};

const VERSION: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
const LIST_CHANGED: &str = "notifications/tools/list_changed";

/// The request side of the soak.
pub(crate) struct Traffic {
    http: reqwest::Client,
    streams: reqwest::Client,
    url: String,
    rec: Arc<Recorder>,
}

type Outcome<T> = Result<T, String>;

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A short name for a reqwest failure and its innermost cause.
fn transport(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else if e.is_body() || e.is_decode() {
        "body"
    } else if e.is_request() {
        "request"
    } else {
        "other"
    };
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let cause: String = cause.to_string().chars().take(60).collect();
    format!("transport {what}: {cause}")
}

/// The JSON-RPC response in a body: the body itself, or the last SSE event carrying a
/// `result` or `error`.
fn response(content_type: &str, body: &str) -> Option<Value> {
    if !content_type.starts_with("text/event-stream") {
        return serde_json::from_str(body).ok();
    }
    let (mut found, mut data) = (None, String::new());
    for line in body.lines().chain([""]) {
        if let Some(d) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(v) = serde_json::from_str::<Value>(&data)
                && (v.get("result").is_some() || v.get("error").is_some())
            {
                found = Some(v);
            }
            data.clear();
        }
    }
    found
}

/// The `result` of a reply with status 200 whose JSON-RPC response echoes `id`.
fn result_of(status: u16, content_type: &str, body: &str, id: u64) -> Outcome<Value> {
    let Some(msg) = response(content_type, body) else {
        return Err(format!("HTTP {status}, no JSON-RPC response"));
    };
    if let Some(code) = msg["error"]["code"].as_i64() {
        return Err(format!("HTTP {status}, JSON-RPC {code}"));
    }
    if status != 200 {
        return Err(format!("HTTP {status}"));
    }
    if msg["id"] != json!(id) {
        return Err("answer: another id".into());
    }
    Ok(msg["result"].clone())
}

fn first_text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

impl Traffic {
    /// Requests to `url` (nginx's `/mcp`), recorded in `rec`.
    pub(crate) fn new(url: String, rec: Arc<Recorder>) -> Traffic {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(15))
            .pool_max_idle_per_host(64)
            .build()
            .unwrap();
        let streams = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        Traffic {
            http,
            streams,
            url,
            rec,
        }
    }

    fn record(&self, kind: &'static str, started: Instant, outcome: Outcome<()>) -> bool {
        match outcome {
            Ok(()) => {
                self.rec.ok(kind, started.elapsed());
                true
            }
            Err(what) => {
                self.rec.fail(kind, what);
                false
            }
        }
    }

    /// One 2026-07-28 request; its `result`.
    async fn rpc(
        &self,
        method: &str,
        name: Option<&str>,
        mut params: Value,
        capabilities: Value,
    ) -> Outcome<Value> {
        params["_meta"] = meta(capabilities);
        let id = 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", method);
        if let Some(name) = name {
            req = req.header("mcp-name", name);
        }
        let resp = req
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| transport(&e))?;
        let status = resp.status().as_u16();
        let ctype = content_type(resp.headers());
        let text = resp.text().await.map_err(|e| transport(&e))?;
        result_of(status, &ctype, &text, id)
    }

    async fn tool(&self, name: &str, extra: Value, capabilities: Value) -> Outcome<Value> {
        let mut params = json!({"name": name, "arguments": {}});
        if let Value::Object(extra) = extra {
            params.as_object_mut().unwrap().extend(extra);
        }
        self.rpc("tools/call", Some(name), params, capabilities)
            .await
    }

    /// `tools/call test_simple_text`.
    pub(crate) async fn call(&self) {
        let t = Instant::now();
        let r = self.tool("test_simple_text", json!({}), json!({})).await;
        let r = r.and_then(|r| match first_text(&r) {
            SIMPLE_TEXT => Ok(()),
            _ => Err("answer: wrong text".into()),
        });
        self.record("call", t, r);
    }

    /// `tools/call test_trigger_tool_change` (publishes `tools/list_changed` on the bus).
    pub(crate) async fn trigger(&self) {
        let t = Instant::now();
        let r = self
            .tool("test_trigger_tool_change", json!({}), json!({}))
            .await;
        let r = r.and_then(|r| match first_text(&r) {
            "notified" => Ok(()),
            _ => Err("answer: wrong text".into()),
        });
        self.record("trigger", t, r);
    }

    /// Every page of `tools/list` (10 per page), each page one request.
    pub(crate) async fn list(&self) {
        let mut cursor: Option<String> = None;
        for _ in 0..50 {
            let t = Instant::now();
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let r = self.rpc("tools/list", None, params, json!({})).await;
            let r = r.and_then(|r| match r["tools"].as_array() {
                Some(tools) if !tools.is_empty() => Ok(r["nextCursor"].as_str().map(String::from)),
                _ => Err("answer: no tools".into()),
            });
            match r {
                Ok(next) => {
                    self.rec.ok("list page", t.elapsed());
                    match next {
                        Some(c) => cursor = Some(c),
                        None => return,
                    }
                }
                Err(what) => return self.rec.fail("list page", what),
            }
        }
        self.rec
            .fail("list page", "answer: more than 50 pages".into());
    }

    /// Two rounds of `test_input_required_result_request_state`: the first answers
    /// `input_required` with a sealed `requestState`, the second carries it back with the
    /// confirmation (nginx may pick another replica for it).
    pub(crate) async fn mrtr(&self) {
        const TOOL: &str = "test_input_required_result_request_state";
        let caps = json!({"elicitation": {"form": {}}});
        let t = Instant::now();
        let r = self.tool(TOOL, json!({}), caps.clone()).await;
        let state = r.and_then(
            |r| match (r["resultType"].as_str(), r["requestState"].as_str()) {
                (Some("input_required"), Some(s)) => Ok(s.to_owned()),
                _ => Err("answer: not input_required with a requestState".into()),
            },
        );
        let state = match state {
            Ok(s) => {
                self.rec.ok("mrtr round 1", t.elapsed());
                s
            }
            Err(what) => return self.rec.fail("mrtr round 1", what),
        };
        let t = Instant::now();
        let answer = json!({
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
            "requestState": state,
        });
        let r = self.tool(TOOL, answer, caps).await;
        let r = r.and_then(|r| {
            if r["resultType"] == "complete" && first_text(&r).starts_with("state-ok") {
                Ok(())
            } else {
                Err("answer: round 2 not complete".into())
            }
        });
        self.record("mrtr round 2", t, r);
    }

    /// A 2025-11-25 request (session headers once there is a session); status, headers, body.
    async fn legacy_send(
        &self,
        http_method: reqwest::Method,
        session: Option<&str>,
        body: Option<Value>,
    ) -> Outcome<(u16, reqwest::header::HeaderMap, String)> {
        let mut req = self
            .http
            .request(http_method, &self.url)
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = session {
            req = req
                .header("mcp-protocol-version", LEGACY)
                .header("mcp-session-id", s);
        }
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let resp = req.send().await.map_err(|e| transport(&e))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.map_err(|e| transport(&e))?;
        Ok((status, headers, text))
    }

    /// A legacy session: `initialize` + `notifications/initialized`, one `tools/call`,
    /// `DELETE`.
    pub(crate) async fn legacy(&self) {
        let t = Instant::now();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "soak-legacy", "version": "1.0.0"}}});
        let session = async {
            let (status, headers, body) = self
                .legacy_send(reqwest::Method::POST, None, Some(init))
                .await?;
            let result = result_of(status, &content_type(&headers), &body, 0)?;
            let session = headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .ok_or("answer: no Mcp-Session-Id")?
                .to_owned();
            if result["protocolVersion"] != LEGACY {
                return Err("answer: another protocolVersion".into());
            }
            let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let (status, _, _) = self
                .legacy_send(reqwest::Method::POST, Some(&session), Some(done))
                .await?;
            match status {
                202 => Ok(session),
                s => Err(format!("HTTP {s} for notifications/initialized")),
            }
        }
        .await;
        let session = match session {
            Ok(s) => {
                self.rec.ok("legacy init", t.elapsed());
                s
            }
            Err(what) => return self.rec.fail("legacy init", what),
        };
        let t = Instant::now();
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "test_simple_text", "arguments": {}}});
        let r = self
            .legacy_send(reqwest::Method::POST, Some(&session), Some(call))
            .await
            .and_then(|(status, headers, body)| {
                let r = result_of(status, &content_type(&headers), &body, 1)?;
                match first_text(&r) {
                    SIMPLE_TEXT => Ok(()),
                    _ => Err("answer: wrong text".into()),
                }
            });
        self.record("legacy call", t, r);
        let t = Instant::now();
        let r = self
            .legacy_send(reqwest::Method::DELETE, Some(&session), None)
            .await
            .and_then(|(status, _, _)| match status {
                200..=299 => Ok(()),
                s => Err(format!("HTTP {s}")),
            });
        self.record("legacy delete", t, r);
    }

    /// Opens a `subscriptions/listen` stream for `tools/list_changed`, waits for its
    /// acknowledgement (timed as "listen open"), holds it for `hold` (or until `stop`),
    /// counting the notifications, then closes it.
    pub(crate) async fn listen(&self, hold: Duration, stop: &mut watch::Receiver<bool>) {
        let t = Instant::now();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": true}, "_meta": meta(json!({}))}});
        let sent = self
            .streams
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", "subscriptions/listen")
            .body(body.to_string())
            .send()
            .await;
        let resp = match sent {
            Ok(r) if r.status() == 200 => r,
            Ok(r) => {
                return self
                    .rec
                    .fail("listen open", format!("HTTP {}", r.status().as_u16()));
            }
            Err(e) => return self.rec.fail("listen open", transport(&e)),
        };
        let mut stream = resp.bytes_stream();
        let mut seen = String::new();
        loop {
            match tokio::time::timeout(Duration::from_secs(10), stream.next()).await {
                Ok(Some(Ok(chunk))) => {
                    seen.push_str(&String::from_utf8_lossy(&chunk));
                    if seen.contains("subscriptions/acknowledged") {
                        break;
                    }
                }
                Ok(Some(Err(e))) => return self.rec.fail("listen open", transport(&e)),
                Ok(None) => {
                    return self
                        .rec
                        .fail("listen open", "ended before the acknowledgement".into());
                }
                Err(_) => {
                    return self
                        .rec
                        .fail("listen open", "no acknowledgement in 10 s".into());
                }
            }
        }
        self.rec.ok("listen open", t.elapsed());
        let held = Instant::now();
        let deadline = tokio::time::Instant::now() + hold;
        let mut events = seen.matches(LIST_CHANGED).count();
        // The tail of what was read, so a notification split across chunks is counted once.
        let mut tail = String::new();
        loop {
            let next = tokio::select! {
                _ = tokio::time::sleep_until(deadline) => break,
                _ = stop.changed() => break,
                next = tokio::time::timeout(Duration::from_secs(20), stream.next()) => next,
            };
            match next {
                Ok(Some(Ok(chunk))) => {
                    let before = tail.matches(LIST_CHANGED).count();
                    tail.push_str(&String::from_utf8_lossy(&chunk));
                    let now = tail.matches(LIST_CHANGED).count();
                    for _ in before..now {
                        self.rec.listen_event();
                    }
                    events += now - before;
                    let keep = tail.len().saturating_sub(LIST_CHANGED.len());
                    let keep = (keep..=tail.len())
                        .find(|&i| tail.is_char_boundary(i))
                        .unwrap();
                    tail.drain(..keep);
                }
                Ok(Some(Err(e))) => return self.rec.fail(STREAM, transport(&e)),
                Ok(None) => return self.rec.fail(STREAM, "ended by the server".into()),
                Err(_) => {
                    return self
                        .rec
                        .fail(STREAM, "no bytes for 20 s (keepalive 5 s)".into());
                }
            }
        }
        if events == 0 && held.elapsed() >= Duration::from_secs(10) {
            self.rec.fail(
                STREAM,
                "no notification in 10 s or more (a trigger every 2 s)".into(),
            );
        } else {
            self.rec.ok(STREAM, held.elapsed());
        }
    }
}

fn content_type(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

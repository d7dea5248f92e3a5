//! A legacy (2025-11-25) client over real sockets: `initialize`, requests with
//! `Mcp-Session-Id`, streamed POST responses that may carry server-to-client requests, the
//! session's GET stream, DELETE. Every message it sees is checked against the 2025-11-25
//! schema.

use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};

use std::sync::Arc;

use stateless_mcp::backends::MemorySessionStore;
use stateless_mcp::extend::SessionStore;
use stateless_mcp::notify::Notifier;
use stateless_mcp::settings::StateKeys;
use stateless_mcp::{Server, ServerBuilder};

use super::{Exchange, TestServer, exchange, http_request, schema, sse_payloads, start};

/// The protocol version legacy tests speak.
pub const LEGACY_VERSION: &str = "2025-11-25";

use super::listen::{Events, sse_response};

/// The messages of a response body, each checked against the 2025-11-25 schema.
pub fn legacy_messages(content_type: &str, body: &str, method: Option<&str>) -> Vec<Value> {
    let messages: Vec<Value> = if content_type.starts_with("text/event-stream") {
        sse_payloads(body)
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| {
                serde_json::from_str(p).unwrap_or_else(|e| panic!("SSE data not JSON ({e}): {p}"))
            })
            .collect()
    } else if body.is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(body).unwrap_or_else(|e| panic!("body not JSON ({e}): {body}"))]
    };
    for m in &messages {
        schema::check_legacy_message(m, method);
    }
    messages
}

/// A legacy client of one endpoint, with the session it initialized (if any).
#[derive(Clone)]
pub struct LegacyClient {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    pub version: String,
    /// Extra headers sent on every request (e.g. a test principal).
    pub extra: Vec<(String, String)>,
}

/// An SSE response being read as it arrives.
pub struct LegacyStream {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    events: Events,
    method: Option<String>,
}

impl LegacyStream {
    /// The next message, or `None` when the stream ended. Panics after 20 s of silence.
    pub async fn next(&mut self) -> Option<Value> {
        tokio::time::timeout(Duration::from_secs(20), self.next_message())
            .await
            .expect("a message on the stream within 20 s")
    }

    /// The next message if one comes within `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Option<Value>> {
        tokio::time::timeout(wait, self.next_message()).await.ok()
    }

    async fn next_message(&mut self) -> Option<Value> {
        loop {
            let event = self.events.next().await?.expect("well-formed SSE");
            if event.data.is_empty() {
                continue;
            }
            let message: Value = serde_json::from_str(&event.data)
                .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {}", event.data));
            schema::check_legacy_message(&message, self.method.as_deref());
            return Some(message);
        }
    }
}

impl LegacyClient {
    /// A client with no session yet.
    pub fn new(url: &str) -> Self {
        LegacyClient {
            http: crate::support::http_builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            url: url.to_owned(),
            session: None,
            version: LEGACY_VERSION.to_owned(),
            extra: Vec::new(),
        }
    }

    /// `initialize` with `capabilities`, then `notifications/initialized`.
    pub async fn connect(url: &str, capabilities: Value) -> Self {
        let mut c = Self::new(url);
        c.initialize(capabilities).await;
        c
    }

    /// Sends `initialize` (no version header, as real clients do) and keeps the session.
    pub async fn initialize(&mut self, capabilities: Value) -> Exchange {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.version, "capabilities": capabilities,
            "clientInfo": {"name": "it-legacy", "version": "1.0.0"}}});
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        headers.extend(self.extra.clone());
        let x = self
            .send(headers, body.to_string(), Some("initialize"))
            .await;
        assert_eq!(x.status, 200, "initialize: {}", x.body);
        let session = x
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("initialize returns Mcp-Session-Id")
            .to_owned();
        self.session = Some(session);
        self.version = x.result()["protocolVersion"].as_str().unwrap().to_owned();
        let done = self
            .post(
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                None,
            )
            .await;
        assert_eq!(done.status, 202, "initialized: {}", done.body);
        x
    }

    /// The headers of a request of this session.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
            ("mcp-protocol-version".to_owned(), self.version.clone()),
        ];
        if let Some(s) = &self.session {
            h.push(("mcp-session-id".to_owned(), s.clone()));
        }
        h.extend(self.extra.clone());
        h
    }

    /// Sends `body` with `headers`, reads the whole reply, checks its messages.
    pub async fn send(
        &self,
        headers: Vec<(String, String)>,
        body: String,
        method: Option<&str>,
    ) -> Exchange {
        self.send_with("POST", headers, body, method).await
    }

    /// Like [`send`](Self::send) with any HTTP method.
    pub async fn send_with(
        &self,
        http_method: &str,
        headers: Vec<(String, String)>,
        body: String,
        method: Option<&str>,
    ) -> Exchange {
        let req = http_request(&self.http, http_method, &self.url, &headers, body);
        exchange(req, |ct, body| legacy_messages(ct, body, method)).await
    }

    /// POSTs one message of this session.
    pub async fn post(&self, message: Value, method: Option<&str>) -> Exchange {
        self.send(self.headers(), message.to_string(), method).await
    }

    /// A request of this session, read whole.
    pub async fn request(&self, id: Value, method: &str, params: Value) -> Exchange {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.post(body, Some(method)).await
    }

    /// A request whose response is read as it streams (for server-to-client requests).
    pub async fn stream_request(&self, id: Value, method: &str, params: Value) -> LegacyStream {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let req = http_request(
            &self.http,
            "POST",
            &self.url,
            &self.headers(),
            body.to_string(),
        );
        self.streamed(req, Some(method)).await
    }

    async fn streamed(&self, req: reqwest::RequestBuilder, method: Option<&str>) -> LegacyStream {
        let (status, headers, events) = sse_response(req).await;
        LegacyStream {
            status,
            headers,
            events,
            method: method.map(str::to_owned),
        }
    }

    /// Opens the session's GET stream.
    pub async fn open_stream(&self) -> LegacyStream {
        let mut req = self.http.get(&self.url).timeout(Duration::from_secs(3600));
        for (k, v) in self.headers() {
            if k != "content-type" && k != "accept" {
                req = req.header(k, v);
            }
        }
        req = req.header("accept", "text/event-stream");
        self.streamed(req, None).await
    }

    /// POSTs the answer `result` to the server-to-client request `id`; the HTTP status.
    pub async fn answer(&self, id: &Value, result: Value) -> u16 {
        let x = self
            .post(json!({"jsonrpc": "2.0", "id": id, "result": result}), None)
            .await;
        x.status
    }

    /// DELETEs the session; the HTTP status.
    pub async fn delete(&self) -> u16 {
        self.send_with("DELETE", self.headers(), String::new(), None)
            .await
            .status
    }
}

/// The key ring of test deployments.
pub const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/// The reference fixtures on a builder.
pub fn fixtures(b: ServerBuilder) -> ServerBuilder {
    stateless_mcp::fixtures::conformance(stateless_mcp::fixtures::demo(b))
}

/// Replicas of one deployment: one key ring, bus and session store.
pub struct Deployment {
    pub keys: StateKeys,
    pub notifier: Notifier,
    pub store: Arc<dyn SessionStore>,
}

impl Deployment {
    pub fn new() -> Self {
        Deployment {
            keys: K1.parse().unwrap(),
            notifier: Notifier::memory(),
            store: Arc::new(MemorySessionStore::default()),
        }
    }

    pub fn builder(&self) -> ServerBuilder {
        fixtures(Server::builder())
            .state_keys(self.keys.clone())
            .notifier(self.notifier.clone())
            .session_store(self.store.clone())
    }

    pub async fn replica(&self) -> TestServer {
        start(self.builder().build().unwrap()).await
    }
}

impl LegacyClient {
    /// The same session, sending to `url` (another replica, or the load balancer).
    pub fn at(&self, url: &str) -> LegacyClient {
        LegacyClient {
            url: url.to_owned(),
            ..self.clone()
        }
    }
}

impl LegacyStream {
    /// Reads until the stream ends or breaks (the connection was cut), for at most `within`;
    /// whether it did. Messages before the end are still checked.
    pub async fn ends_within(&mut self, within: Duration) -> bool {
        tokio::time::timeout(within, async {
            while let Some(Ok(event)) = self.events.next().await {
                if !event.data.is_empty() {
                    let message: Value = serde_json::from_str(&event.data)
                        .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {}", event.data));
                    schema::check_legacy_message(&message, self.method.as_deref());
                }
            }
        })
        .await
        .is_ok()
    }
}

/// Checks every message an interop client recorded (one JSON object a line: `message`, and
/// `answers`, the method of the request a response answers) against the 2025-11-25 schema,
/// and that messages of each of the `expected` methods are among them.
pub fn check_recorded_legacy_messages(file: &std::path::Path, expected: &[&str]) {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("the client recorded nothing at {}: {e}", file.display()));
    let mut methods = std::collections::BTreeSet::new();
    let mut count = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a recorded line is not JSON ({e}): {line}"));
        let message = &record["message"];
        schema::check_legacy_message(message, record["answers"].as_str());
        if let Some(m) = message["method"].as_str() {
            methods.insert(m.to_owned());
        }
        count += 1;
    }
    for m in expected {
        assert!(
            methods.contains(*m),
            "no {m} among the {count} recorded messages (methods seen: {methods:?})"
        );
    }
    println!("{count} messages the client received are valid 2025-11-25 messages");
}

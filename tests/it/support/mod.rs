//! Test support: start the app on `127.0.0.1:0`, talk to it over real sockets, and check
//! every message it emits against the official schema.

#![allow(dead_code, unreachable_pub)]

#[cfg(feature = "auth")]
pub mod authz;
pub mod brokers;
pub mod cluster;
#[cfg(all(feature = "auth", feature = "external-tests"))]
pub mod dpop;
pub mod example;
pub mod in_process;
pub mod legacy;
pub mod listen;
pub mod process;
pub mod redis_commands;
pub mod schema;
pub mod stdio;
#[cfg(feature = "auth")]
pub mod tls;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use stateless_mcp::{Server, StreamableHttp};
use tokio::task::JoinHandle;

/// Polls `done` (every 50 ms) until it holds, and fails the test with `what` if it does not
/// within `within`: for a state reached in real time (an expiry, a close), in place of a
/// fixed sleep and an assert. Make `within` generous; a quick machine does not wait for it.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} (not within {within:?})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How long a change to a legacy session made on one replica (`logging/setLevel`, DELETE)
/// may take to be honoured on another. The other replica keeps the session's settings
/// cached until the bus's announcement of the change reaches it (milliseconds, more on a
/// loaded machine: the changing replica waits for its own copy, not for the others'), and
/// without that announcement for up to the settings cache's 1 s. This is under that second,
/// so a replica that forgot only by expiry fails a check made soon after it loaded the
/// session.
pub const ACROSS_REPLICAS: Duration = Duration::from_millis(500);

/// A new HTTP client for tests.
pub fn http() -> reqwest::Client {
    reqwest::Client::new()
}

/// A client builder for tests.
pub fn http_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
}

/// `GET url` with a new client.
pub async fn get(url: impl reqwest::IntoUrl) -> reqwest::Result<reqwest::Response> {
    http().get(url).send().await
}

/// The protocol version under test.
pub const VERSION: &str = "2026-07-28";

/// A server listening on an ephemeral loopback port, stopped on drop.
pub struct TestServer {
    pub addr: SocketAddr,
    pub url: String,
    task: JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `server` with the default HTTP settings.
pub async fn start(server: Server) -> TestServer {
    start_http(StreamableHttp::new(server)).await
}

/// Serves a configured endpoint.
pub async fn start_http(http: StreamableHttp) -> TestServer {
    let path = http.endpoint_path().to_owned();
    start_router(http.into_router(), &path).await
}

/// Serves any router; `path` is the MCP endpoint within it.
pub async fn start_router(router: axum::Router, path: &str) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve_on(listener, router, path)
}

/// Serves `router` on a listener bound beforehand (when the address must be known first).
pub fn serve_on(listener: tokio::net::TcpListener, router: axum::Router, path: &str) -> TestServer {
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    TestServer {
        addr,
        url: format!("http://localhost:{}{path}", addr.port()),
        task,
    }
}

/// Serves `server` behind a test-only authentication layer: the `x-test-user` header
/// becomes the request's principal (subject = its value, issuer `https://issuer.test`);
/// without it the request is anonymous.
pub async fn start_with_test_principal(server: Server) -> TestServer {
    async fn authenticate(
        mut req: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        let user = req
            .headers()
            .get("x-test-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(user) = user {
            req.extensions_mut().insert(
                stateless_mcp::handler::Principal::new(user).with_issuer("https://issuer.test"),
            );
        }
        next.run(req).await
    }
    let router = StreamableHttp::new(server)
        .into_router()
        .layer(axum::middleware::from_fn(authenticate));
    start_router(router, "/mcp").await
}

/// The reference server with the demo and conformance fixtures, as the binary builds it.
pub fn fixtures_server() -> Server {
    let b = stateless_mcp::fixtures::demo(Server::builder());
    stateless_mcp::fixtures::conformance(b).build().unwrap()
}

/// The standard `_meta` of a request.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// `params` with the standard `_meta` merged in (keys already in `params._meta` win).
pub fn with_meta(params: Value) -> Value {
    let mut params = if params.is_null() { json!({}) } else { params };
    let mut m = meta();
    if let Some(extra) = params.get("_meta").and_then(Value::as_object) {
        for (k, v) in extra {
            m[k] = v.clone();
        }
    }
    params["_meta"] = m;
    params
}

/// One HTTP exchange: status, headers, and every JSON-RPC message of the body.
#[derive(Debug)]
pub struct Exchange {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
    pub messages: Vec<Value>,
}

impl Exchange {
    /// The last message (the response).
    pub fn response(&self) -> &Value {
        self.messages.last().unwrap_or_else(|| {
            panic!(
                "no message in body {:?} (status {})",
                self.body, self.status
            )
        })
    }

    /// The `result` of the response (panics on an error).
    pub fn result(&self) -> &Value {
        let r = self.response();
        r.get("result")
            .unwrap_or_else(|| panic!("expected a result, got {r}"))
    }

    /// The error code of the response.
    pub fn error_code(&self) -> i64 {
        let r = self.response();
        r.pointer("/error/code")
            .and_then(Value::as_i64)
            .unwrap_or_else(|| panic!("expected an error, got {r}"))
    }

    /// The content type.
    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// Notifications before the response.
    pub fn notifications(&self) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m.get("method").is_some())
            .collect()
    }
}

/// Parses the `data:` payloads of an SSE body.
pub fn sse_payloads(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() {
                out.push(data.join("\n"));
                data.clear();
            }
        } else if let Some(d) = line.strip_prefix("data:") {
            data.push(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    if !data.is_empty() {
        out.push(data.join("\n"));
    }
    out
}

/// The JSON-RPC messages of a response body (one JSON object, or SSE `data:` payloads), each
/// checked against the schema; `method` is the request they answer, if known.
pub fn checked_messages(content_type: &str, body: &str, method: Option<&str>) -> Vec<Value> {
    let messages: Vec<Value> = if content_type.starts_with("text/event-stream") {
        sse_payloads(body)
            .iter()
            .map(|p| {
                serde_json::from_str(p)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {p}"))
            })
            .collect()
    } else if body.is_empty() {
        Vec::new()
    } else {
        assert!(
            content_type.starts_with("application/json"),
            "unexpected content type {content_type:?} for {body}"
        );
        vec![
            serde_json::from_str(body).unwrap_or_else(|e| panic!("body is not JSON ({e}): {body}")),
        ]
    };
    for m in &messages {
        schema::check_message(m, method);
    }
    messages
}

/// Headers and body of a well-formed request: the standard headers (with `Mcp-Name` for the
/// methods that carry one), `_meta` merged into `params`.
pub fn request_parts(method: &str, id: Value, params: Value) -> (Vec<(String, String)>, String) {
    let params = with_meta(params);
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .filter(|_| {
            matches!(
                method,
                "tools/call"
                    | "prompts/get"
                    | "resources/read"
                    | "tasks/get"
                    | "tasks/update"
                    | "tasks/cancel"
            )
        })
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    (Client::headers(method, name.as_deref()), body.to_string())
}

/// A client that sends well-formed requests and checks every reply against the schema.
#[derive(Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub url: String,
}

impl Client {
    pub fn new(url: &str) -> Self {
        Client {
            http: crate::support::http_builder()
                .timeout(Duration::from_secs(20))
                .build()
                .unwrap(),
            url: url.to_owned(),
        }
    }

    /// The standard headers of a request for `method` (and `name` for Mcp-Name).
    pub fn headers(method: &str, name: Option<&str>) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".into(), "application/json".into()),
            (
                "accept".into(),
                "application/json, text/event-stream".into(),
            ),
            ("mcp-protocol-version".into(), VERSION.into()),
            ("mcp-method".into(), method.into()),
        ];
        if let Some(n) = name {
            h.push(("mcp-name".into(), n.into()));
        }
        h
    }

    /// A well-formed request: standard headers, `_meta` merged into `params`.
    pub async fn request(&self, method: &str, id: Value, params: Value) -> Exchange {
        let (headers, body) = request_parts(method, id, params);
        self.send(headers, body, Some(method)).await
    }

    /// Calls the conformance fixture `test_trigger_tool_change` (a tools list-changed
    /// event on the bus) and asserts it succeeded.
    pub async fn trigger_tool_change(&self, id: Value) -> Exchange {
        let call = self
            .request(
                "tools/call",
                id,
                json!({"name": "test_trigger_tool_change", "arguments": {}}),
            )
            .await;
        assert_eq!(call.status, 200, "{}", call.body);
        call
    }

    /// Sends `body` with exactly these headers, and checks the reply's messages.
    pub async fn send(
        &self,
        headers: Vec<(String, String)>,
        body: String,
        method: Option<&str>,
    ) -> Exchange {
        self.send_with("POST", headers, body, method).await
    }

    /// POSTs exactly `headers` and `body` and returns the response unread and unchecked (for
    /// refusals that are not MCP messages, such as OAuth errors).
    pub async fn post_raw(&self, headers: &[(String, String)], body: String) -> reqwest::Response {
        http_request(&self.http, "POST", &self.url, headers, body)
            .send()
            .await
            .expect("request sent")
    }

    /// Like [`Client::send`] with any HTTP method.
    pub async fn send_with(
        &self,
        http_method: &str,
        headers: Vec<(String, String)>,
        body: String,
        method: Option<&str>,
    ) -> Exchange {
        let req = http_request(&self.http, http_method, &self.url, &headers, body);
        exchange(req, |ct, body| checked_messages(ct, body, method)).await
    }
}

/// A request with exactly these headers and body, not sent yet.
pub fn http_request(
    http: &reqwest::Client,
    http_method: &str,
    url: &str,
    headers: &[(String, String)],
    body: String,
) -> reqwest::RequestBuilder {
    let mut req = http
        .request(http_method.parse().expect("an HTTP method"), url)
        .body(body);
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    req
}

/// Sends `req` and reads the whole reply; `check` turns its content type and body into the
/// messages, validated against the schema of their era.
pub async fn exchange(
    req: reqwest::RequestBuilder,
    check: impl FnOnce(&str, &str) -> Vec<Value>,
) -> Exchange {
    let resp = req.send().await.expect("request sent");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.text().await.expect("body read");
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let messages = check(&ct, &body);
    Exchange {
        status,
        headers,
        body,
        messages,
    }
}

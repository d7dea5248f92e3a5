//! Metrics after traffic, request spans carrying the caller's trace id, health routes.

use serde_json::{Value, json};
use stateless_mcp::observability::{Readiness, health_router};

use crate::support::process::spawn_server;
use crate::support::{Client, start_router};

const META_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const SECRET_ARGUMENT: &str = "do-not-log-this-argument-7d1f";

/// The value of the one series of `name` whose labels are exactly `labels`.
pub(crate) fn series(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|line| {
            let (head, value) = line.rsplit_once(' ')?;
            let (metric, rest) = match head.split_once('{') {
                Some((m, r)) => (m, r.strip_suffix('}')?),
                None => (head, ""),
            };
            if metric != name {
                return None;
            }
            let mut got = Vec::new();
            let mut left = rest;
            while !left.is_empty() {
                let (key, r) = left.split_once("=\"")?;
                let end = r.find('"')?;
                got.push(format!("{key}=\"{}\"", &r[..end]));
                left = r[end + 1..].trim_start_matches(',');
            }
            let mut want = want.clone();
            got.sort();
            want.sort();
            (got == want).then(|| value.parse().ok())?
        })
}

pub(crate) async fn scrape(base: &str) -> String {
    let resp = crate::support::get(format!("{base}/metrics"))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/plain"), "{ct}");
    resp.text().await.unwrap()
}

#[tokio::test]
async fn metrics_count_requests_by_method_tool_and_outcome() {
    let srv = spawn_server(&[]);
    let client = Client::new(&srv.url);
    for id in 0..3 {
        let x = client
            .request(
                "tools/call",
                json!(id),
                json!({"name": "echo", "arguments": {"text": "x"}}),
            )
            .await;
        assert_eq!(x.status, 200);
    }
    let x = client
        .request(
            "tools/call",
            json!(9),
            json!({"name": "no-such-tool", "arguments": {}}),
        )
        .await;
    assert_eq!(x.error_code(), -32602);
    let x = client.request("tools/list", json!(10), Value::Null).await;
    assert_eq!(x.status, 200);
    // A request that never reaches JSON-RPC: 406 from the HTTP layer.
    let mut h = Client::headers("tools/list", None);
    h.retain(|(k, _)| k != "accept");
    h.push(("accept".into(), "text/html".into()));
    assert_eq!(client.send(h, "{}".into(), None).await.status, 406);

    let text = scrape(&srv.base).await;
    let total = "mcp_server_requests_total";
    let ok_echo = [
        ("method", "tools/call"),
        ("name", "echo"),
        ("outcome", "ok"),
    ];
    assert_eq!(series(&text, total, &ok_echo), Some(3.0), "{text}");
    let unknown = [
        ("method", "tools/call"),
        ("name", "_other"),
        ("outcome", "invalid_params"),
    ];
    assert_eq!(series(&text, total, &unknown), Some(1.0), "{text}");
    let list = [("method", "tools/list"), ("name", ""), ("outcome", "ok")];
    assert_eq!(series(&text, total, &list), Some(1.0), "{text}");
    let refused = [
        ("method", "tools/list"),
        ("name", ""),
        ("outcome", "not_acceptable"),
    ];
    assert_eq!(series(&text, total, &refused), Some(1.0), "{text}");
    // The client-chosen tool name never becomes a label value.
    assert!(!text.contains("no-such-tool"), "{text}");

    let hist = "mcp_server_operation_duration_seconds_count";
    assert_eq!(series(&text, hist, &ok_echo), Some(3.0), "{text}");
    let mut inf = ok_echo.to_vec();
    inf.push(("le", "+Inf"));
    assert_eq!(
        series(&text, "mcp_server_operation_duration_seconds_bucket", &inf),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        series(&text, "mcp_server_requests_in_flight", &[]),
        Some(0.0),
        "{text}"
    );
    assert!(text.contains("# HELP mcp_server_requests_total "), "{text}");
}

/// JSON log lines of the spawned server whose request span has `jsonrpc.request.id == id`.
fn request_lines(lines: &[String], id: &str) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            v.pointer("/span/jsonrpc.request.id")
                .and_then(Value::as_str)
                == Some(id)
        })
        .collect()
}

#[tokio::test]
async fn request_spans_carry_the_callers_trace_id() {
    let srv = spawn_server(&["--log-format", "json", "--log", "stateless_mcp=debug"]);
    let client = Client::new(&srv.url);
    // From `_meta.traceparent`, which wins over the header.
    let params = json!({
        "name": "echo",
        "arguments": {"text": SECRET_ARGUMENT},
        "_meta": {"traceparent": format!("00-{META_TRACE}-00f067aa0ba902b7-01")}
    });
    let mut headers = Client::headers("tools/call", Some("echo"));
    headers.push((
        "traceparent".into(),
        format!("00-{HEADER_TRACE}-b7ad6b7169203331-01"),
    ));
    let body = json!({"jsonrpc": "2.0", "id": "with-meta", "method": "tools/call",
        "params": crate::support::with_meta(params)});
    let x = client
        .send(headers, body.to_string(), Some("tools/call"))
        .await;
    assert_eq!(x.status, 200);
    // From the HTTP header alone.
    let mut headers = Client::headers("prompts/get", Some("greet"));
    headers.push((
        "traceparent".into(),
        format!("00-{HEADER_TRACE}-b7ad6b7169203331-01"),
    ));
    let body = json!({"jsonrpc": "2.0", "id": "with-header", "method": "prompts/get",
        "params": crate::support::with_meta(json!({"name": "greet", "arguments": {"name": "Ada"}}))});
    let x = client
        .send(headers, body.to_string(), Some("prompts/get"))
        .await;
    assert_eq!(x.status, 200);
    // The "request finished" line comes before the response is sent; scrape to be sure
    // the stderr reader has caught up with both requests.
    let _ = scrape(&srv.base).await;
    let mut lines = Vec::new();
    for _ in 0..100 {
        lines = srv.stderr_lines();
        if !request_lines(&lines, "with-header").is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let meta = request_lines(&lines, "with-meta");
    let finished = meta
        .iter()
        .find(|v| v["fields"]["message"] == "request finished")
        .unwrap_or_else(|| panic!("no request line for with-meta in {lines:#?}"));
    let span = &finished["span"];
    assert_eq!(span["name"], "mcp.request");
    assert_eq!(span["trace_id"], META_TRACE);
    assert_eq!(span["parent_span_id"], "00f067aa0ba902b7");
    assert_eq!(span["mcp.method.name"], "tools/call");
    assert_eq!(span["gen_ai.tool.name"], "echo");
    assert_eq!(span["gen_ai.operation.name"], "execute_tool");
    assert_eq!(span["mcp.protocol.version"], crate::support::VERSION);
    assert_eq!(span["mcp.client.name"], "it");
    assert_eq!(finished["fields"]["outcome"], "ok");

    let header = request_lines(&lines, "with-header");
    let span = &header.first().expect("a line for with-header")["span"];
    assert_eq!(span["trace_id"], HEADER_TRACE);
    assert_eq!(span["gen_ai.prompt.name"], "greet");

    // Arguments are not logged.
    assert!(
        lines.iter().all(|l| !l.contains(SECRET_ARGUMENT)),
        "an argument was logged"
    );
}

#[tokio::test]
async fn admin_listen_moves_health_and_metrics_off_the_mcp_port() {
    let srv = spawn_server(&["--admin-listen", "127.0.0.1:0"]);
    let lines = srv.stderr_lines();
    let admin = lines
        .iter()
        .find_map(|l| l.split("admin_address=").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no admin address logged in {lines:#?}"))
        .to_owned();
    for path in ["/healthz", "/readyz", "/metrics"] {
        let admin_status = crate::support::get(format!("http://{admin}{path}"))
            .await
            .unwrap()
            .status();
        assert_eq!(admin_status, 200, "{path} on the admin port");
        let main_status = crate::support::get(format!("{}{path}", srv.base))
            .await
            .unwrap()
            .status();
        assert_eq!(main_status, 404, "{path} on the MCP port");
    }
    let x = Client::new(&srv.url)
        .request("tools/list", json!(1), Value::Null)
        .await;
    assert_eq!(x.status, 200);
    let text = crate::support::get(format!("http://{admin}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let list = [("method", "tools/list"), ("name", ""), ("outcome", "ok")];
    assert_eq!(
        series(&text, "mcp_server_requests_total", &list),
        Some(1.0),
        "{text}"
    );
}

/// The metrics table of `docs/operations.md` lists exactly the metrics of
/// `observability::metrics`.
#[test]
fn operations_doc_lists_every_metric() {
    let readme =
        std::fs::read_to_string(crate::support::process::root().join("docs/operations.md"))
            .unwrap();
    let listed: std::collections::BTreeSet<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `mcp_"))
        .filter_map(|rest| rest.split('`').next())
        .map(|n| format!("mcp_{n}"))
        .collect();
    let declared: std::collections::BTreeSet<String> = stateless_mcp::observability::metrics::ALL
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(listed, declared);
}

#[tokio::test]
async fn readyz_reports_named_conditions() {
    let readiness = Readiness::new();
    let bus = readiness.condition("bus");
    let srv = start_router(health_router(readiness.clone()), "/mcp").await;
    let base = format!("http://localhost:{}", srv.addr.port());
    let get = |path: &'static str| {
        let url = format!("{base}{path}");
        async move {
            let r = crate::support::get(url).await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    assert_eq!(get("/readyz").await, (200, json!({"status": "ready"})));
    bus.not_ready("redis unreachable");
    assert_eq!(
        get("/readyz").await,
        (
            503,
            json!({"status": "not ready", "reasons": ["bus: redis unreachable"]})
        )
    );
    assert_eq!(get("/healthz").await, (200, json!({"status": "ok"})));
    bus.ready();
    assert_eq!(get("/readyz").await.0, 200);
    readiness.set_draining();
    assert_eq!(
        get("/readyz").await,
        (503, json!({"status": "not ready", "reasons": ["draining"]}))
    );
}

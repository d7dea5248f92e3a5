//! OTLP trace export (feature `otel`) of the reference server, against a real OTLP/HTTP
//! receiver decoding with the official protobuf definitions: the request span continues the
//! caller's trace (`params._meta.traceparent`, else the `traceparent` header), is named and
//! attributed per the MCP semantic conventions, is flushed at drain, costs nothing when the
//! collector is down, and nothing is exported without `OTEL_EXPORTER_OTLP_ENDPOINT`; the
//! same metrics as Prometheus's go over OTLP too, unless `OTEL_METRICS_EXPORTER=none`.

#[cfg(feature = "external-tests")]
mod cluster;
mod receiver;

use std::time::Duration;

use opentelemetry_proto::tonic::metrics::v1::{Metric, metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use serde_json::json;

use crate::support::legacy::LegacyClient;
use crate::support::process::{ServerProcess, spawn_server_with};
use crate::support::stdio::StdioClient;
use crate::support::{Client, VERSION, with_meta};
use receiver::{Receiver, attr, hex};

const TRACE: &str = "5bf92f3577b34da6a3ce929d0e0e4736";
const CALLER: &str = "10f067aa0ba902b7";
const HEADER_TRACE: &str = "1af7651916cd43dd8448eb211c80319c";
const HEADER_CALLER: &str = "c7ad6b7169203331";

/// The reference server exporting to `endpoint` (`OTEL_EXPORTER_OTLP_ENDPOINT`), batches
/// every `delay_ms`.
fn exporting_server(endpoint: &str, delay_ms: &str) -> ServerProcess {
    spawn_server_with(
        &["--drain-delay-secs", "0"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
            ("OTEL_BSP_SCHEDULE_DELAY", delay_ms),
            ("OTEL_SERVICE_NAME", "it-otel"),
        ],
    )
}

/// An echo `tools/call` with id `id` carrying the caller's context in `params._meta`.
async fn echo_with_context(client: &Client, id: &str, trace: &str, caller: &str) {
    let params = json!({
        "name": "echo",
        "arguments": {"text": "hi"},
        "_meta": {
            "traceparent": format!("00-{trace}-{caller}-01"),
            "tracestate": "vendor=x"
        }
    });
    let x = client.request("tools/call", json!(id), params).await;
    assert_eq!(x.status, 200, "{}", x.body);
    assert!(x.messages[0].get("result").is_some(), "{}", x.body);
}

/// Stops `srv` (SIGTERM), waits up to 30 s for it to exit, checks it exited successfully,
/// and returns its log lines.
async fn stop(mut srv: ServerProcess) -> Vec<String> {
    srv.signal("TERM");
    let (status, lines) = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || (srv.wait(), srv.stderr_lines())),
    )
    .await
    .expect("the server exits")
    .unwrap();
    assert!(status.success(), "{status:?}");
    lines
}

#[tokio::test]
async fn a_tool_call_continues_the_callers_trace_over_otlp() {
    let receiver = Receiver::start().await;
    let srv = exporting_server(&receiver.endpoint, "100");
    let client = Client::new(&srv.url);

    echo_with_context(&client, "call-1", TRACE, CALLER).await;
    let got = receiver.wait_for(TRACE, "tools/call echo").await;
    let span = &got.span;
    assert_eq!(hex(&span.parent_span_id), CALLER);
    assert_eq!(span.kind, SpanKind::Server as i32);
    assert_eq!(span.trace_state, "vendor=x");
    assert_eq!(span.span_id.len(), 8);
    assert!(span.end_time_unix_nano >= span.start_time_unix_nano);
    let a = |k| attr(&span.attributes, k);
    assert_eq!(a("mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(a("gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(a("gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(a("mcp.protocol.version").as_deref(), Some(VERSION));
    assert!(
        a("jsonrpc.request.id").is_some_and(|id| id.contains("call-1")),
        "{:?}",
        span.attributes
    );
    assert_eq!(a("error.type"), None);
    assert_ne!(
        span.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );
    assert_eq!(
        attr(&got.resource, "service.name").as_deref(),
        Some("it-otel")
    );
    // The handler's work: a child span of the request span.
    let handler = receiver.wait_for(TRACE, "mcp.handler").await;
    assert_eq!(handler.span.parent_span_id, span.span_id);
    assert_eq!(handler.span.kind, SpanKind::Internal as i32);
    // Arguments are never exported.
    assert!(
        span.attributes
            .iter()
            .all(|kv| !format!("{kv:?}").contains("\"hi\""))
    );

    // No `_meta.traceparent`: the HTTP `traceparent` header is the parent.
    let mut headers = Client::headers("prompts/get", Some("greet"));
    headers.push((
        "traceparent".into(),
        format!("00-{HEADER_TRACE}-{HEADER_CALLER}-01"),
    ));
    let body = json!({"jsonrpc": "2.0", "id": "prompt-1", "method": "prompts/get",
        "params": with_meta(json!({"name": "greet", "arguments": {"name": "Ada"}}))});
    let x = client
        .send(headers, body.to_string(), Some("prompts/get"))
        .await;
    assert_eq!(x.status, 200, "{}", x.body);
    let got = receiver.wait_for(HEADER_TRACE, "prompts/get greet").await;
    assert_eq!(hex(&got.span.parent_span_id), HEADER_CALLER);
    assert_eq!(
        attr(&got.span.attributes, "gen_ai.prompt.name").as_deref(),
        Some("greet")
    );

    // A JSON-RPC error: `error.type`, the error code, and an error status.
    let params = json!({
        "name": "no-such-tool",
        "arguments": {},
        "_meta": {"traceparent": format!("00-{TRACE}-{CALLER}-01")}
    });
    let x = client.request("tools/call", json!("bad-1"), params).await;
    let code = x.messages[0]["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error reply: {}", x.body));
    let got = receiver.wait_for(TRACE, "tools/call no-such-tool").await;
    let a = |k| attr(&got.span.attributes, k);
    assert!(a("error.type").is_some(), "{:?}", got.span.attributes);
    assert_eq!(a("rpc.response.status_code"), Some(code.to_string()));
    assert_eq!(
        got.span.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );
}

#[tokio::test]
async fn spans_still_queued_are_exported_at_drain() {
    let receiver = Receiver::start().await;
    // A batch delay far longer than the test: only the flush at shutdown exports.
    let srv = exporting_server(&receiver.endpoint, "600000");
    let client = Client::new(&srv.url);
    echo_with_context(&client, "queued", TRACE, CALLER).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.spans().is_empty(), "exported before the drain");
    stop(srv).await;
    let got = receiver.wait_for(TRACE, "tools/call echo").await;
    assert_eq!(hex(&got.span.parent_span_id), CALLER);
}

#[tokio::test]
async fn a_collector_that_is_down_costs_requests_nothing() {
    // A port nothing listens on: every export is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let srv = exporting_server(&endpoint, "10");
    let client = Client::new(&srv.url);
    for i in 0..50 {
        let id = format!("down-{i}");
        let call = echo_with_context(&client, &id, TRACE, CALLER);
        tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .expect("a request is not held up by the exporter");
    }
    // Nor does the shutdown hang on the unreachable collector.
    stop(srv).await;
}

#[tokio::test]
async fn a_collector_that_never_answers_costs_requests_nothing() {
    // Accepts connections and reads, never answers: every export waits for its timeout
    // while the queue fills (a queue of 8 spans: most are dropped).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let srv = spawn_server_with(
        &["--drain-delay-secs", "0"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_BSP_SCHEDULE_DELAY", "10"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "8"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "8"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1000"),
        ],
    );
    let client = Client::new(&srv.url);
    for i in 0..50 {
        let id = format!("hung-{i}");
        let call = echo_with_context(&client, &id, TRACE, CALLER);
        tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .expect("a request is not held up by the exporter");
    }
    let lines = stop(srv).await;
    // The drops are logged (the SDK keeps their count to itself).
    assert!(
        lines
            .iter()
            .any(|l| l.contains("WARN") && l.contains("BatchSpanProcessor dropped a Span")),
        "{lines:#?}"
    );
}

#[tokio::test]
async fn nothing_is_exported_without_an_endpoint() {
    let receiver = Receiver::start().await;
    // Everything but the endpoint (pointed at the receiver under a name the SDK ignores).
    let srv = spawn_server_with(
        &["--drain-delay-secs", "0"],
        &[
            ("OTEL_BSP_SCHEDULE_DELAY", "10"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "10"),
            ("OTEL_SERVICE_NAME", "it-otel"),
            ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", &receiver.endpoint),
        ],
    );
    let client = Client::new(&srv.url);
    echo_with_context(&client, "quiet", TRACE, CALLER).await;
    stop(srv).await;
    // The exporter would have flushed at shutdown: the process is gone, nothing came.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(receiver.spans().is_empty(), "{:#?}", receiver.spans());
    assert!(receiver.metrics().is_empty(), "{:#?}", receiver.metrics());

    // The endpoint set, the SDK disabled (`OTEL_SDK_DISABLED`): nothing either.
    let srv = spawn_server_with(
        &["--drain-delay-secs", "0"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint),
            ("OTEL_BSP_SCHEDULE_DELAY", "10"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "10"),
            ("OTEL_SDK_DISABLED", "true"),
        ],
    );
    let client = Client::new(&srv.url);
    echo_with_context(&client, "disabled", TRACE, CALLER).await;
    stop(srv).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(receiver.spans().is_empty(), "{:#?}", receiver.spans());
    assert!(receiver.metrics().is_empty(), "{:#?}", receiver.metrics());
}

#[tokio::test]
async fn over_stdio_the_context_comes_from_meta() {
    let receiver = Receiver::start().await;
    let mut c = StdioClient::spawn_with(
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );
    let params = json!({
        "name": "echo",
        "arguments": {"text": "hi"},
        "_meta": {"traceparent": format!("00-{TRACE}-{CALLER}-01")}
    });
    c.request(json!("stdio-1"), "tools/call", params).await;
    let reply = c.next().await;
    assert!(reply.get("result").is_some(), "{reply}");
    let got = receiver.wait_for(TRACE, "tools/call echo").await;
    assert_eq!(hex(&got.span.parent_span_id), CALLER);
    assert_eq!(got.span.kind, SpanKind::Server as i32);
    assert_eq!(
        attr(&got.resource, "service.name").as_deref(),
        Some("stateless-mcp")
    );
    c.close_stdin().await;
    assert!(c.expect_end().await.is_empty());
    assert!(c.exit_status().await.success());
}

#[tokio::test]
async fn a_legacy_session_is_named_by_its_store_key_never_its_id() {
    const LEGACY_TRACE: &str = "2bf92f3577b34da6a3ce929d0e0e4736";
    let receiver = Receiver::start().await;
    let srv = exporting_server(&receiver.endpoint, "100");
    let c = LegacyClient::connect(&srv.url, json!({})).await;
    let params = json!({
        "name": "echo",
        "arguments": {"text": "hi"},
        "_meta": {"traceparent": format!("00-{LEGACY_TRACE}-{CALLER}-01")}
    });
    let x = c.request(json!(7), "tools/call", params).await;
    assert_eq!(x.status, 200, "{}", x.body);
    let got = receiver.wait_for(LEGACY_TRACE, "tools/call echo").await;
    assert_eq!(hex(&got.span.parent_span_id), CALLER);
    let a = |k| attr(&got.span.attributes, k);
    assert_eq!(a("mcp.protocol.version").as_deref(), Some("2025-11-25"));
    let session = a("mcp.session.id").expect("mcp.session.id");
    let id = c.session.clone().unwrap();
    assert!(!session.is_empty() && !id.contains(&session) && session != id);
}

/// The value of a sum's data point whose `method` attribute is `method` (summed over the
/// other attributes), or 0.
fn sum_for(metric: &Metric, method: &str) -> f64 {
    let Some(metric::Data::Sum(sum)) = &metric.data else {
        return 0.0;
    };
    sum.data_points
        .iter()
        .filter(|p| attr(&p.attributes, "method").as_deref() == Some(method))
        .map(|p| match p.value {
            Some(number_data_point::Value::AsInt(i)) => i as f64,
            Some(number_data_point::Value::AsDouble(d)) => d,
            None => 0.0,
        })
        .sum()
}

#[tokio::test]
async fn the_same_metrics_go_over_otlp_and_to_prometheus() {
    let receiver = Receiver::start().await;
    let srv = spawn_server_with(
        &["--drain-delay-secs", "0"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
            ("OTEL_SERVICE_NAME", "it-otel"),
            ("OTEL_TRACES_SAMPLER", "always_off"),
        ],
    );
    let client = Client::new(&srv.url);
    for i in 0..3 {
        echo_with_context(&client, &format!("m{i}"), TRACE, CALLER).await;
    }
    // The request counter, cumulative, with the same labels as Prometheus's.
    let got = receiver
        .wait_for_metric("mcp_server_requests_total", |m| {
            sum_for(m, "tools/call") >= 3.0
        })
        .await;
    assert_eq!(sum_for(&got.metric, "tools/call"), 3.0);
    let Some(metric::Data::Sum(sum)) = &got.metric.data else {
        unreachable!()
    };
    assert!(sum.is_monotonic);
    assert_eq!(sum.aggregation_temporality, 2, "cumulative");
    assert_eq!(
        attr(&got.resource, "service.name").as_deref(),
        Some("it-otel")
    );
    assert_eq!(
        got.metric.description,
        "MCP requests handled, by method, name and outcome"
    );
    // The duration histogram, with the Prometheus exporter's buckets.
    let hist = receiver
        .wait_for_metric("mcp_server_operation_duration_seconds", |m| {
            matches!(&m.data, Some(metric::Data::Histogram(h))
                if h.data_points.iter().map(|p| p.count).sum::<u64>() >= 3)
        })
        .await;
    assert_eq!(hist.metric.unit, "s");
    let Some(metric::Data::Histogram(h)) = &hist.metric.data else {
        unreachable!()
    };
    let text = crate::support::get(format!("{}/metrics", srv.base))
        .await
        .expect("/metrics answers")
        .text()
        .await
        .unwrap();
    // Prometheus counts the same three calls.
    let prometheus_calls: f64 = text
        .lines()
        .filter(|l| {
            l.starts_with("mcp_server_requests_total{") && l.contains("method=\"tools/call\"")
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(prometheus_calls, 3.0, "{text}");
    // And its `le` bounds are the OTLP histogram's explicit bounds.
    let point = h
        .data_points
        .iter()
        .find(|p| attr(&p.attributes, "method").as_deref() == Some("tools/call"))
        .expect("a tools/call data point");
    let first = text
        .lines()
        .find(|l| {
            l.starts_with("mcp_server_operation_duration_seconds_bucket{")
                && l.contains("method=\"tools/call\"")
        })
        .expect("a tools/call bucket line");
    let series = &first[..first.find("le=").unwrap()];
    let prometheus_bounds: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with(series) && !l.contains("le=\"+Inf\""))
        .map(|l| {
            let le = &l[l.find("le=\"").unwrap() + 4..];
            le[..le.find('"').unwrap()].parse::<f64>().unwrap()
        })
        .collect();
    assert_eq!(point.explicit_bounds, prometheus_bounds);
}

#[tokio::test]
async fn metrics_are_not_exported_when_switched_off() {
    let receiver = Receiver::start().await;
    let srv = spawn_server_with(
        &["--drain-delay-secs", "0"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint),
            ("OTEL_METRIC_EXPORT_INTERVAL", "100"),
            ("OTEL_BSP_SCHEDULE_DELAY", "10"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ],
    );
    let client = Client::new(&srv.url);
    echo_with_context(&client, "off", TRACE, CALLER).await;
    // Traces still go: the span arrives, and in that time no metric did.
    receiver.wait_for(TRACE, "tools/call echo").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(receiver.metrics().is_empty(), "{:?}", receiver.metrics());
}

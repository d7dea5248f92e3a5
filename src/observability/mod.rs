//! Operations: request spans, metrics, health probes.
//!
//! - **Tracing.** Every MCP request gets one `mcp.request` span (at `DEBUG`) whose fields are
//!   named after the OpenTelemetry MCP semantic conventions: `mcp.method.name`,
//!   `gen_ai.tool.name`, `gen_ai.prompt.name`, `gen_ai.operation.name` (`execute_tool`),
//!   `mcp.resource.uri`, `jsonrpc.request.id`, `mcp.protocol.version`, `error.type`, plus
//!   `mcp.client.name` (the self-reported `clientInfo.name`, no convention exists for it),
//!   `mcp.session.id` for a 2025-11-25 session (its store key, never the sealed id).
//!   The constant `network.transport` (`tcp`) and `network.protocol.name` (`http`) are left
//!   out: each field costs formatting on every request. The caller's W3C trace context —
//!   `params._meta.traceparent`, else the HTTP `traceparent` header — is recorded as
//!   `trace_id` and `parent_span_id`, so every log line of the request carries the caller's
//!   trace id. Arguments, results and credentials are never recorded. When the request's
//!   final response is produced, a `DEBUG` event `request finished` (with `outcome` and
//!   `duration_ms`) is logged in the span.
//!
//!   Cost: with the stock `tracing-subscriber` text formatter the span adds about 30k
//!   instructions per request (mostly formatting its fields, ~20-40% of a small request's
//!   throughput); metrics add about 6k. That is why it is at `DEBUG`: the default `--log
//!   info` skips it (no work at all), and `--log info,stateless_mcp::observability=debug`
//!   turns it on (with the trace ids on every line of the request). With the `otel` feature,
//!   [`OtlpTraces`] exports the span over OTLP as a server span named `{method} {target}`
//!   (`tools/call echo`), the caller's span as its parent, and an `mcp.handler` child span
//!   for the handler's work.
//! - **Metrics.** [`metrics`] lists every metric's name ([`metrics::ALL`]) and describes
//!   them (described when the reference server installs the exporter); `Server::handle` records request counts, durations and in-flight
//!   requests for every transport (HTTP, stdio, in-process). With the `prometheus` feature, `PrometheusMetrics` installs the exporter and
//!   serves the text format; with `otel`, `OtlpMetrics` pushes the same instruments to an
//!   OTLP collector (alone, or beside Prometheus through `PrometheusMetrics::install_with`).
//! - **Health.** [`Readiness`] (draining + named conditions) and [`health_router`]
//!   (`/healthz`, `/readyz`).

mod health;
#[cfg(any(feature = "prometheus", feature = "otel"))]
mod install;
pub mod metrics;
#[cfg(feature = "otel")]
mod otel;
#[cfg(feature = "otel")]
mod otlp_metrics;
#[cfg(feature = "prometheus")]
mod prometheus;
mod propagation;
mod readiness;
mod request;
mod trace_context;

pub(crate) use health::health_router_at;
pub use health::{HEALTHZ_PATH, READYZ_PATH, health_router};
#[cfg(feature = "otel")]
pub use otel::OtlpTraces;
#[cfg(feature = "otel")]
pub use otlp_metrics::OtlpMetrics;
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusMetrics;
pub(crate) use propagation::{continue_trace, current_traceparent, inside_a_span};
pub use readiness::{Condition, Readiness};
pub(crate) use request::{RequestObserver, RequestProbe};
pub(crate) use request::{SpanMeta, on_answer, on_request, on_trace};
pub(crate) use request::{TRACEPARENT, traceparent_header};
pub(crate) use trace_context::TraceParent;

/// The path where the reference server serves its metrics (Prometheus text format).
pub const METRICS_PATH: &str = "/metrics";

//! OpenTelemetry traces over OTLP (feature `otel`): the `mcp.request` spans leave the process.
//!
//! [`OtlpTraces::from_env`] reads the standard `OTEL_*` variables and, when an OTLP endpoint
//! is set, builds a tracer provider with a batch span processor; [`OtlpTraces::layer`] is the
//! `tracing-subscriber` layer to put in your subscriber. Request spans then become OTel
//! server spans named `{mcp.method.name} {target}` (`tools/call echo`), children of the
//! caller's span when the request carries a W3C trace context (`params._meta.traceparent` /
//! `tracestate` first, then the HTTP `traceparent` header).
//!
//! Off the request path: a finished span is handed to a bounded queue
//! (`OTEL_BSP_MAX_QUEUE_SIZE`, 2048 by default) and exported in batches by the SDK's own
//! thread; when the queue is full (a slow or unreachable collector) spans are dropped, never
//! waited for. The SDK keeps the drop count private: it logs a warning at the first drop
//! and the total at shutdown (target `opentelemetry_sdk`), there is no metric of it.
//!
//! Without an exporter installed nothing here runs: the request span stays a `DEBUG` span
//! that the usual `--log info` filter skips.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry_http::hyper::HyperClient;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracerProvider};
use tokio::runtime::Handle;
use tracing::{Level, Span, Subscriber};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterExt, Targets, filter_fn};
use tracing_subscriber::registry::LookupSpan;

use super::TraceParent;
use crate::Error;

/// Whether a layer of an [`OtlpTraces`] was made: the request span then fills in the
/// OTel-only fields (kind, name, parent, status). One relaxed load per request otherwise.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether request spans are being exported (an [`OtlpTraces::layer`] was made).
pub(crate) fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// The variables that switch export on; without either, [`OtlpTraces::from_env`] returns
/// `None`.
const ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// The instrumentation scope of the exported spans.
const SCOPE: &str = "stateless-mcp";

/// OTLP trace export configured from the standard `OTEL_*` environment variables.
///
/// | Variable | Effect |
/// |---|---|
/// | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL (`/v1/traces` is appended); export is on only when this or the next one is set |
/// | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` | the full traces URL, instead of the above |
/// | `OTEL_SDK_DISABLED` | `true`: no export, whatever the endpoint |
/// | `OTEL_EXPORTER_OTLP_PROTOCOL` (`_TRACES_PROTOCOL`) | `http/protobuf` (the default and the only one built in; `grpc` and `http/json` are refused) |
/// | `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (`_TRACES_`) | extra headers, export timeout in ms (10 000) |
/// | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource (`service.name` defaults to the name you pass) |
/// | `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG` | sampling (default `parentbased_always_on`) |
/// | `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` | the batch processor (5 s, 2048, 512) |
///
/// Make it inside a Tokio runtime (the exporter's HTTP client runs its requests on it), put
/// [`layer`](Self::layer) in your subscriber, and call [`shutdown`](Self::shutdown) once your
/// server has drained, to export what is still queued.
///
/// ```no_run
/// use tracing_subscriber::prelude::*;
///
/// # async fn run() -> Result<(), stateless_mcp::Error> {
/// let traces = stateless_mcp::observability::OtlpTraces::from_env("my-server")?;
/// tracing_subscriber::registry()
///     .with(traces.as_ref().map(|t| t.layer()))
///     .init();
/// // ... serve until drained ...
/// if let Some(traces) = traces {
///     tokio::task::spawn_blocking(move || traces.shutdown()).await.ok();
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct OtlpTraces {
    provider: SdkTracerProvider,
}

impl OtlpTraces {
    /// The exporter the `OTEL_*` variables describe, or `None` when neither
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` nor `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, or
    /// `OTEL_SDK_DISABLED` is `true` (then nothing is exported). `service_name` is the `service.name` unless `OTEL_SERVICE_NAME`
    /// or `OTEL_RESOURCE_ATTRIBUTES` names one.
    ///
    /// # Errors
    ///
    /// Outside a Tokio runtime, for a protocol other than `http/protobuf`, or for an endpoint
    /// the exporter cannot use.
    pub fn from_env(service_name: &str) -> Result<Option<Self>, Error> {
        if !export_wanted(&ENDPOINT_VARS) {
            return Ok(None);
        }
        check_protocol("TRACES")?;
        let client = http_client("TRACES", "OtlpTraces::from_env")?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_http_client(client)
            .build()
            .map_err(|e| Error::internal(format!("OTLP trace exporter: {e}")))?;
        let provider = SdkTracerProvider::builder()
            .with_span_processor(BatchSpanProcessor::builder(exporter).build())
            .with_resource(resource(service_name))
            .build();
        Ok(Some(OtlpTraces { provider }))
    }

    /// The `tracing-subscriber` layer that turns this crate's spans into OTel spans and
    /// exports them. It has its own filter: spans of target `stateless_mcp` at `DEBUG` and
    /// above (the `mcp.request` span), and their `WARN` and `ERROR` events as span events;
    /// nothing of other crates. Give your own log layer its own filter
    /// ([`Layer::with_filter`]) rather than a global one, or the request span (at `DEBUG`)
    /// never reaches this layer.
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        EXPORTING.store(true, Ordering::Relaxed);
        let filter = Targets::new()
            .with_target("stateless_mcp", Level::DEBUG)
            .and(filter_fn(|m| m.is_span() || *m.level() <= Level::WARN));
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer(SCOPE))
            // The OTel span starts when its first child does or when it closes, not when it is
            // entered: dispatch enters the request span before it reads the caller's context
            // from the body, and sets the parent then.
            .with_context_activation(false)
            .with_tracked_inactivity(false)
            .with_location(false)
            .with_threads(false)
            .with_filter(filter)
    }

    /// Exports the spans still queued and stops the exporter. It blocks up to the export
    /// timeout: call it off the runtime's workers (`spawn_blocking`), after your server has
    /// drained.
    ///
    /// # Errors
    ///
    /// When the last export failed or timed out, or on a second call.
    pub fn shutdown(self) -> Result<(), Error> {
        EXPORTING.store(false, Ordering::Relaxed);
        self.provider
            .shutdown()
            .map_err(|e| Error::internal(format!("OTLP trace export at shutdown: {e}")))
    }
}

/// Whether export is asked for: one of `endpoint_vars` is set and not empty, and
/// `OTEL_SDK_DISABLED` is not `true`.
pub(super) fn export_wanted(endpoint_vars: &[&str]) -> bool {
    let set = |v: &str| std::env::var_os(v).is_some_and(|v| !v.is_empty());
    let disabled =
        std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    !disabled && endpoint_vars.iter().any(|v| set(v))
}

/// The resource of what is exported: `service.name` is `service_name` unless
/// `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names one (the SDK reads both).
pub(super) fn resource(service_name: &str) -> Resource {
    let named_in_env = std::env::var_os("OTEL_SERVICE_NAME").is_some_and(|v| !v.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|a| {
            a.split(',')
                .any(|kv| kv.trim().starts_with("service.name="))
        });
    let mut resource = Resource::builder();
    if !named_in_env {
        resource = resource.with_service_name(service_name.to_owned());
    }
    resource.build()
}

/// The exporter's HTTP client for `signal` (`TRACES`, `METRICS`), each attempt bounded by
/// its export timeout, run on the caller's Tokio runtime (`who` is named when there is none).
pub(super) fn http_client(signal: &str, who: &str) -> Result<OnRuntime, Error> {
    let runtime = Handle::try_current()
        .map_err(|_| Error::internal(format!("{who} needs a Tokio runtime")))?;
    Ok(OnRuntime {
        // Bounds each attempt (the exporter's timeout only bounds its retries).
        client: HyperClient::with_default_connector(export_timeout(signal), None),
        runtime,
    })
}

/// `OTEL_EXPORTER_OTLP_{signal}_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds),
/// else the specification's 10 s.
fn export_timeout(signal: &str) -> Duration {
    [
        format!("OTEL_EXPORTER_OTLP_{signal}_TIMEOUT"),
        "OTEL_EXPORTER_OTLP_TIMEOUT".to_owned(),
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse::<u64>().ok())
    .map_or(Duration::from_secs(10), Duration::from_millis)
}

/// Refuses an OTLP protocol other than http/protobuf for `signal` (`TRACES`, `METRICS`):
/// gRPC would bring tonic in.
pub(super) fn check_protocol(signal: &str) -> Result<(), Error> {
    let protocol = std::env::var(format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL"))
        .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .unwrap_or_default();
    match protocol.trim() {
        "" | "http/protobuf" => Ok(()),
        other => Err(Error::internal(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL={other:?} is not supported: stateless-mcp exports \
             {} over http/protobuf (a collector's port 4318)",
            signal.to_ascii_lowercase()
        ))),
    }
}

/// The hyper client, run on the server's Tokio runtime: the batch processor exports from its
/// own thread, where hyper would find no runtime to drive its connections.
#[derive(Debug)]
pub(super) struct OnRuntime {
    client: HyperClient,
    runtime: Handle,
}

#[async_trait::async_trait]
impl HttpClient for OnRuntime {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        self.runtime
            .spawn(async move { client.send_bytes(request).await })
            .await
            .map_err(|e| Box::new(e) as HttpError)?
    }
}

/// Fills in the OTel-only fields of a request span once dispatch knows the request: the
/// name `{method} {target}` (target: the tool or prompt name) and the caller's context as
/// parent (`traceparent` plus `tracestate` when they came in `_meta`).
pub(super) fn on_request(
    span: &Span,
    method: &str,
    target: Option<&str>,
    parent: Option<(TraceParent, Option<&str>)>,
) {
    match target {
        Some(t) => span.record("otel.name", format!("{method} {t}")),
        None => span.record("otel.name", method),
    };
    if let Some((tp, state)) = parent {
        set_remote_parent(span, &tp, state);
    }
}

/// Makes the caller's span (`traceparent` and `tracestate`) the parent of `span`.
pub(super) fn set_remote_parent(span: &Span, tp: &TraceParent, state: Option<&str>) {
    if let Some(cx) = remote_context(tp, state) {
        // Fails only when the OTel span has started already (a child span came first).
        let _ = span.set_parent(cx);
    }
}

/// The `traceparent` of the current span's OTel span (started now if it was not yet).
pub(super) fn current_traceparent() -> Option<String> {
    let cx = Span::current().context();
    let span = cx.span();
    let sc = span.span_context();
    sc.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        )
    })
}

/// The caller's span as a remote parent context.
fn remote_context(tp: &TraceParent, tracestate: Option<&str>) -> Option<Context> {
    let state = tracestate
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    let span = SpanContext::new(
        TraceId::from_hex(tp.trace_id()).ok()?,
        SpanId::from_hex(tp.parent_id()).ok()?,
        TraceFlags::new(tp.flags()),
        true,
        state,
    );
    Some(Context::new().with_remote_span_context(span))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callers_context_becomes_a_remote_parent() {
        let tp =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        let cx = remote_context(&tp, Some("vendor=x")).unwrap();
        let span = cx.span();
        let sc = span.span_context();
        assert!(sc.is_remote() && sc.is_sampled());
        assert_eq!(
            sc.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
        assert_eq!(sc.trace_state().get("vendor"), Some("x"));
    }
}

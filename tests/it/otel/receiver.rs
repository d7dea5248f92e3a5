//! An OTLP/HTTP receiver on loopback: `POST /v1/traces` and `POST /v1/metrics`, bodies
//! decoded as `ExportTraceServiceRequest` and `ExportMetricsServiceRequest` with the official
//! protobuf definitions (`opentelemetry-proto`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::Metric;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// One received span with its resource's attributes.
#[derive(Debug, Clone)]
pub(super) struct Received {
    pub(super) span: Span,
    pub(super) resource: Vec<KeyValue>,
}

/// One received metric with its resource's attributes.
#[derive(Debug, Clone)]
pub(super) struct ReceivedMetric {
    pub(super) metric: Metric,
    pub(super) resource: Vec<KeyValue>,
}

/// What the receiver has received so far.
#[derive(Default)]
struct Inbox {
    spans: Mutex<Vec<Received>>,
    metrics: Mutex<Vec<ReceivedMetric>>,
}

/// The receiver: its base URL (the value of `OTEL_EXPORTER_OTLP_ENDPOINT`) and every span
/// and metric received so far. Stops with the test's runtime.
pub(super) struct Receiver {
    pub(super) endpoint: String,
    inbox: Arc<Inbox>,
}

async fn traces(State(inbox): State<Arc<Inbox>>, body: Bytes) -> Vec<u8> {
    let request =
        ExportTraceServiceRequest::decode(body).expect("an ExportTraceServiceRequest body");
    let mut all = inbox.spans.lock().unwrap();
    for rs in request.resource_spans {
        let resource = rs.resource.map(|r| r.attributes).unwrap_or_default();
        for ss in rs.scope_spans {
            for span in ss.spans {
                all.push(Received {
                    span,
                    resource: resource.clone(),
                });
            }
        }
    }
    ExportTraceServiceResponse::default().encode_to_vec()
}

async fn metrics(State(inbox): State<Arc<Inbox>>, body: Bytes) -> Vec<u8> {
    let request =
        ExportMetricsServiceRequest::decode(body).expect("an ExportMetricsServiceRequest body");
    let mut all = inbox.metrics.lock().unwrap();
    for rm in request.resource_metrics {
        let resource = rm.resource.map(|r| r.attributes).unwrap_or_default();
        for sm in rm.scope_metrics {
            for metric in sm.metrics {
                all.push(ReceivedMetric {
                    metric,
                    resource: resource.clone(),
                });
            }
        }
    }
    ExportMetricsServiceResponse::default().encode_to_vec()
}

impl Receiver {
    /// Listens on an ephemeral loopback port.
    pub(super) async fn start() -> Receiver {
        let inbox = Arc::new(Inbox::default());
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .route("/v1/metrics", post(metrics))
            .with_state(inbox.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver {
            endpoint: format!("http://{addr}"),
            inbox,
        }
    }

    /// Every span received so far.
    pub(super) fn spans(&self) -> Vec<Received> {
        self.inbox.spans.lock().unwrap().clone()
    }

    /// Every metric received so far (one entry per metric per export).
    pub(super) fn metrics(&self) -> Vec<ReceivedMetric> {
        self.inbox.metrics.lock().unwrap().clone()
    }

    /// Waits (up to 20 s) for an export of metric `name` that `accept` takes, and returns it.
    pub(super) async fn wait_for_metric(
        &self,
        name: &str,
        accept: impl Fn(&Metric) -> bool,
    ) -> ReceivedMetric {
        for _ in 0..400 {
            let found = self
                .metrics()
                .into_iter()
                .rev()
                .find(|r| r.metric.name == name && accept(&r.metric));
            if let Some(r) = found {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let names: Vec<String> = self.metrics().into_iter().map(|r| r.metric.name).collect();
        panic!("no export of metric {name:?} as expected; got {names:?}");
    }

    /// Waits (up to 20 s) for a span of trace `trace_id` (hex) named `name`.
    pub(super) async fn wait_for(&self, trace_id: &str, name: &str) -> Received {
        self.wait_for_where(trace_id, name, |_| true).await
    }

    /// Waits (up to 20 s) for a span of trace `trace_id` (hex) named `name` that `accept`
    /// takes.
    pub(super) async fn wait_for_where(
        &self,
        trace_id: &str,
        name: &str,
        accept: impl Fn(&Received) -> bool,
    ) -> Received {
        for _ in 0..400 {
            let found = self
                .spans()
                .into_iter()
                .find(|r| hex(&r.span.trace_id) == trace_id && r.span.name == name && accept(r));
            if let Some(r) = found {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "no span {name:?} of trace {trace_id} received; got {:#?}",
            self.spans()
        );
    }

    /// Whether `span` descends from `ancestor` through spans received so far.
    #[cfg(feature = "external-tests")]
    pub(super) fn descends_from(&self, span: &Received, ancestor: &Received) -> bool {
        let spans = self.spans();
        let mut parent = span.span.parent_span_id.clone();
        while !parent.is_empty() {
            if parent == ancestor.span.span_id {
                return true;
            }
            match spans.iter().find(|r| r.span.span_id == parent) {
                Some(p) => parent = p.span.parent_span_id.clone(),
                None => return false,
            }
        }
        false
    }
}

/// Lower-case hex of an id.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The string form of attribute `key` (strings as they are, integers in decimal).
pub(super) fn attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    let value = attrs.iter().find(|kv| kv.key == key)?.value.as_ref()?;
    match value.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        any_value::Value::IntValue(i) => Some(i.to_string()),
        any_value::Value::BoolValue(b) => Some(b.to_string()),
        other => Some(format!("{other:?}")),
    }
}

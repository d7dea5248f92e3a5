//! The same metrics over OTLP (feature `otel`), for fleets that run no Prometheus.
//!
//! Every instrument of [`super::metrics`] is recorded through the [`metrics`] facade; an
//! [`OtlpMetrics`] is a recorder of that facade (the `metrics-opentelemetry` bridge) feeding
//! an OTel meter provider whose periodic reader pushes cumulative sums, gauges and
//! histograms (with the Prometheus exporter's duration buckets) to the collector over
//! http/protobuf. Installed alone ([`OtlpMetrics::install`]) or beside the Prometheus
//! exporter ([`PrometheusMetrics::install_with`](super::PrometheusMetrics::install_with)):
//! then each sample goes to both.
//!
//! Off the request path: recording is an in-memory update; the reader exports from its own
//! thread every `OTEL_METRIC_EXPORT_INTERVAL` (60 s by default), each attempt bounded by the
//! export timeout. A collector that is down costs an export that fails and is logged.

use metrics_opentelemetry::{OpenTelemetryMetrics, OpenTelemetryRecorder};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};

use super::install::install_global;
use super::metrics::{DURATION_BUCKETS, REQUEST_DURATION_SECONDS};
use super::otel::{check_protocol, export_wanted, http_client, resource};
use crate::Error;

/// The variables that switch metric export on; without either, [`OtlpMetrics::from_env`]
/// returns `None`.
const ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// The instrumentation scope of the exported metrics.
const SCOPE: &str = "stateless-mcp";

/// OTLP metric export configured from the standard `OTEL_*` environment variables.
///
/// | Variable | Effect |
/// |---|---|
/// | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL (`/v1/metrics` is appended); export is on only when this or the next one is set |
/// | `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` | the full metrics URL, instead of the above |
/// | `OTEL_METRICS_EXPORTER` | `none`: no metric export (traces may still be exported) |
/// | `OTEL_SDK_DISABLED` | `true`: no export, whatever the endpoint |
/// | `OTEL_EXPORTER_OTLP_PROTOCOL` (`_METRICS_PROTOCOL`) | `http/protobuf` only, as for traces |
/// | `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (`_METRICS_`) | extra headers, export timeout in ms (10 000) |
/// | `OTEL_METRIC_EXPORT_INTERVAL` | milliseconds between exports (60 000) |
/// | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource (`service.name` defaults to the name you pass) |
///
/// Sums and histograms are cumulative, like Prometheus's; the names are the Prometheus ones
/// (`mcp_requests_total`, …, listed in [`super::metrics::ALL`]).
///
/// ```no_run
/// # async fn run() -> Result<(), stateless_mcp::Error> {
/// use stateless_mcp::observability::OtlpMetrics;
///
/// let metrics = OtlpMetrics::from_env("my-server")?;
/// if let Some(m) = &metrics {
///     m.install()?; // or PrometheusMetrics::install_with(m) to serve /metrics too
/// }
/// // ... serve until drained ...
/// if let Some(m) = metrics {
///     tokio::task::spawn_blocking(move || m.shutdown()).await.ok();
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct OtlpMetrics {
    provider: SdkMeterProvider,
}

impl OtlpMetrics {
    /// The exporter the `OTEL_*` variables describe, or `None` when neither
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` nor `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is set,
    /// `OTEL_METRICS_EXPORTER` is `none` or `OTEL_SDK_DISABLED` is `true`. `service_name` is
    /// the `service.name` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names one.
    ///
    /// # Errors
    ///
    /// Outside a Tokio runtime, for a protocol other than `http/protobuf`, or for an endpoint
    /// the exporter cannot use.
    pub fn from_env(service_name: &str) -> Result<Option<Self>, Error> {
        let off = std::env::var("OTEL_METRICS_EXPORTER")
            .is_ok_and(|v| v.trim().eq_ignore_ascii_case("none"));
        if off || !export_wanted(&ENDPOINT_VARS) {
            return Ok(None);
        }
        check_protocol("METRICS")?;
        let client = http_client("METRICS", "OtlpMetrics::from_env")?;
        let exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_http_client(client)
            .with_temporality(Temporality::Cumulative)
            .build()
            .map_err(|e| Error::internal(format!("OTLP metric exporter: {e}")))?;
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter).build())
            .with_resource(resource(service_name))
            .build();
        Ok(Some(OtlpMetrics { provider }))
    }

    /// A [`metrics`] recorder feeding this exporter, the request duration with the same
    /// buckets as the Prometheus exporter's.
    pub(super) fn recorder(&self) -> OpenTelemetryRecorder {
        let mut recorder =
            OpenTelemetryRecorder::new(OpenTelemetryMetrics::new(self.provider.meter(SCOPE)));
        recorder
            .set_histogram_bounds_mut(std::iter::once(REQUEST_DURATION_SECONDS), DURATION_BUCKETS);
        recorder
    }

    /// Installs this exporter as the process's global [`metrics`] recorder and describes
    /// every metric of [`super::metrics`]. For Prometheus too, use
    /// [`PrometheusMetrics::install_with`](super::PrometheusMetrics::install_with) instead.
    ///
    /// # Errors
    ///
    /// When a recorder is installed already (this one, Prometheus's, or another).
    pub fn install(&self) -> Result<(), Error> {
        install_global(self.recorder())
    }

    /// Exports the metrics one last time and stops the exporter. It blocks up to the export
    /// timeout: call it off the runtime's workers (`spawn_blocking`), after your server has
    /// drained.
    ///
    /// # Errors
    ///
    /// When the last export failed or timed out, or on a second call.
    pub fn shutdown(self) -> Result<(), Error> {
        self.provider
            .shutdown()
            .map_err(|e| Error::internal(format!("OTLP metric export at shutdown: {e}")))
    }
}

//! Log output of the reference server: a tracing subscriber writing text or JSON to stderr,
//! and OTLP trace export when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.

use tracing_subscriber::prelude::*;
use tracing_subscriber::{EnvFilter, Layer};

use super::{Config, LogFormat, SERVICE_NAME};
use crate::Error;
use crate::observability::OtlpTraces;

/// What [`init_logging`] installed that needs an end: the OTLP exporter, if any.
#[derive(Debug)]
#[must_use = "call `shutdown` after serving, to export the spans still queued"]
pub struct Telemetry {
    traces: Option<OtlpTraces>,
}

impl Telemetry {
    /// Exports the spans still queued (after the drain) and stops the exporter; a failed
    /// export is logged.
    pub async fn shutdown(self) {
        let Some(traces) = self.traces else {
            return;
        };
        match tokio::task::spawn_blocking(move || traces.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "trace export"),
            Err(e) => tracing::warn!(error = %e, "trace export"),
        }
    }
}

/// Installs the global tracing subscriber the configuration asks for: the `--log` filter,
/// `--log-format` text (colored only on a terminal) or JSON (JSON lines carry the fields of the current span and of every
/// span above it, so a request's log lines carry its `trace_id`), written to stderr; and,
/// when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, the
/// OTLP trace exporter ([`OtlpTraces`]) with its own filter, whatever `--log` says.
pub fn init_logging(config: &Config) -> Result<Telemetry, Error> {
    let filter = EnvFilter::try_new(&config.log)
        .map_err(|e| Error::internal(format!("invalid --log filter {:?}: {e}", config.log)))?;
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let fmt = match config.log_format {
        LogFormat::Text => fmt.with_filter(filter).boxed(),
        LogFormat::Json => fmt
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_filter(filter)
            .boxed(),
    };
    let traces = OtlpTraces::from_env(SERVICE_NAME)?;
    tracing_subscriber::registry()
        .with(fmt)
        .with(traces.as_ref().map(OtlpTraces::layer))
        .try_init()
        .map_err(|e| Error::internal(format!("cannot install the logger: {e}")))?;
    Ok(Telemetry { traces })
}

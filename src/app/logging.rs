//! Log output of the reference server: a tracing subscriber writing text or JSON to stderr.

use tracing_subscriber::EnvFilter;

use super::{Config, LogFormat};
use crate::Error;

/// Installs the global tracing subscriber the configuration asks for: the `--log` filter,
/// `--log-format` text (colored only on a terminal) or JSON (JSON lines carry the fields of the current span and of every
/// span above it, so a request's log lines carry its `trace_id`), written to stderr.
pub fn init_logging(config: &Config) -> Result<(), Error> {
    let filter = EnvFilter::try_new(&config.log)
        .map_err(|e| Error::internal(format!("invalid --log filter {:?}: {e}", config.log)))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let installed = match config.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .try_init(),
    };
    installed.map_err(|e| Error::internal(format!("cannot install the logger: {e}")))
}

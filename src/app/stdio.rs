//! The reference server on stdio (`--transport stdio`): the same server and fixtures as over
//! HTTP, served on stdin and stdout by [`Stdio`], with logs on stderr.
//!
//! There are no HTTP routes: no health, readiness or metrics endpoints (the host watches
//! the process itself). `--body-limit` is the line limit, `--max-in-flight` bounds the
//! requests handled at once (`0`: as many as the session can count), and `--shutdown-timeout-secs` is how long requests in flight
//! get to finish when stdin ends or at SIGTERM/SIGINT; then the process exits with status 0.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::builder::server_builder_with;
use super::config::Config;
use crate::Error;
use crate::transport::stdio::Stdio;

/// What ends the session early: a given future, or SIGTERM/SIGINT.
type Signal = Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>;

/// Serves on stdin/stdout until stdin ends, `signal` (default: SIGTERM or SIGINT) resolves,
/// or stdout is closed.
pub(super) async fn serve(config: Config, signal: Signal) -> Result<(), Error> {
    let signal = signal.unwrap_or_else(|| Box::pin(crate::transport::http::shutdown_signal()));
    if config.auth_issuer.is_some() || config.resource.is_some() {
        return Err(Error::invalid_definition(
            "--auth-issuer and --resource protect the HTTP transport; over stdio the host \
             that starts the server is the client (pass credentials in its environment)",
        ));
    }
    let server = server_builder_with(&config, None)?.build()?;
    tracing::info!(settings = %config.effective_line(), "effective configuration");
    tracing::info!(fixtures = ?config.fixtures, "serving MCP on stdio");
    let shutdown = CancellationToken::new();
    let session = Stdio::new(server)
        .line_limit(config.body_limit)
        .max_in_flight(usize::try_from(config.max_in_flight).unwrap_or(usize::MAX))
        .drain_timeout(Duration::from_secs(config.shutdown_timeout_secs))
        .shutdown(shutdown.clone())
        .serve();
    tokio::pin!(session);
    tokio::select! {
        result = &mut session => return result,
        () = signal => shutdown.cancel(),
    }
    session.await
}

//! Graceful drain: what a [`Runner`](super::Runner) does between its shutdown signal
//! (SIGTERM or SIGINT by default) and returning.
//!
//! 1. `/readyz` turns 503 at once ([`Readiness::set_draining`]), so the load balancer takes
//!    the replica out of rotation; the listener keeps accepting meanwhile.
//! 2. After the drain delay (or at a second signal) the listeners close (new
//!    connections are refused) and long-lived streams end; for [`IDLE_GRACE`] more, requests
//!    on connections already open are still served, each answered with `Connection: close`.
//!    A proxy's keep-alive pool (nginx `keepalive`) thus retires its connections to this
//!    replica one by one, and its next new connection is refused, which a proxy retries on
//!    another replica even for a POST. Closing idle pooled connections at once instead
//!    races with the proxy writing a request on one: nginx answers that POST with a 502.
//! 3. Then the shutdown token is cancelled (idle connections close) and in-flight requests
//!    get the shutdown timeout to finish; then [`Runner::serve`](super::Runner::serve)
//!    returns `Ok` whether or not they did.

use std::future::Future;
use std::time::Duration;

use super::connection::ServeTask;
use super::signal::Signal;
use crate::Error;
use crate::observability::Readiness;

/// Resolves at the next SIGINT or SIGTERM (installed at the call).
pub(crate) use crate::transport::http::shutdown_signal as signal;

/// How long connections that were open when the listener closed are still served.
pub(crate) const IDLE_GRACE: Duration = Duration::from_secs(1);

/// The timings of a drain.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) delay: Duration,
    pub(crate) timeout: Duration,
}

async fn finished(task: &mut ServeTask) -> Result<(), Error> {
    match task.await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Error::io("server failed", e)),
        Err(e) => Err(Error::internal(format!("server task failed: {e}"))),
    }
}

/// Resolves when the first server ends (never, when there is none).
async fn any_ended(servers: &mut [ServeTask]) -> Result<(), Error> {
    if servers.is_empty() {
        std::future::pending::<()>().await;
    }
    let futs = servers.iter_mut().map(|t| Box::pin(finished(t)));
    futures_util::future::select_all(futs).await.0
}

/// Serves until `signal` resolves, then drains: readiness off, wait `delay`, cancel `closed`
/// (the listeners close; long-lived streams end), wait [`IDLE_GRACE`], cancel `stop` (idle
/// connections close), wait up to `timeout` for the servers to finish. A server that fails
/// before the signal ends the process with its error.
pub(crate) async fn run(
    mut servers: Vec<ServeTask>,
    signal: impl Future<Output = ()>,
    readiness: &Readiness,
    closed: &Signal,
    stop: &Signal,
    timing: Timing,
) -> Result<(), Error> {
    tokio::select! {
        r = any_ended(&mut servers) => {
            return r.and(Err(Error::internal("the server stopped on its own")));
        }
        () = signal => {}
    }
    readiness.set_draining();
    crate::observability::metrics::record_draining(true);
    tracing::info!(
        drain_delay_secs = timing.delay.as_secs(),
        "shutdown signal: /readyz now answers 503; closing the listener after the drain delay"
    );
    tokio::select! {
        r = any_ended(&mut servers) => {
            return r.and(Err(Error::internal("the server stopped on its own")));
        }
        () = tokio::time::sleep(timing.delay) => {}
        () = self::signal() => tracing::info!("second signal: closing the listener now"),
    }
    tracing::info!(
        grace_ms = IDLE_GRACE.as_millis() as u64,
        "closing the listener; still serving open connections (with Connection: close)"
    );
    closed.cancel();
    tokio::select! {
        r = any_ended(&mut servers) => {
            return r.and(Err(Error::internal("the server stopped on its own")));
        }
        () = tokio::time::sleep(IDLE_GRACE) => {}
    }
    tracing::info!(
        shutdown_timeout_secs = timing.timeout.as_secs(),
        "closing idle connections; waiting for in-flight requests"
    );
    stop.cancel();
    let all = futures_util::future::join_all(servers.iter_mut().map(finished));
    match tokio::time::timeout(timing.timeout, all).await {
        Ok(results) => {
            for r in results {
                r?;
            }
            tracing::info!("drained; exiting");
        }
        Err(_) => tracing::warn!(
            "in-flight requests did not finish within the shutdown timeout; exiting anyway"
        ),
    }
    Ok(())
}

//! Graceful drain: what the reference server does between SIGTERM (or SIGINT) and exit.
//!
//! 1. `/readyz` turns 503 at once ([`Readiness::set_draining`]), so the load balancer takes
//!    the replica out of rotation; the listener keeps accepting meanwhile.
//! 2. After `--drain-delay-secs` (or at a second signal) the listeners stop accepting and the
//!    shutdown token is cancelled: long-lived streams end, idle keep-alive connections close.
//! 3. In-flight requests get `--shutdown-timeout-secs` to finish; then the process exits
//!    (status 0) whether or not they did.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::observability::Readiness;

/// Resolves at the next SIGINT or SIGTERM. The handlers are installed when this is called,
/// not when the future is first polled, so no signal sent after the call is missed.
pub(crate) fn signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let int = signal(SignalKind::interrupt());
        async move {
            let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
                match s {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(term) => {},
                () = wait(int) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The timings of a drain.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) delay: Duration,
    pub(crate) timeout: Duration,
}

type ServeTask = JoinHandle<std::io::Result<()>>;

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

/// Serves until `signal` resolves, then drains: readiness off, wait `delay`, cancel `stop`
/// (the listeners stop accepting; long-lived streams end), wait up to `timeout` for the
/// servers to finish. A server that fails before the signal ends the process with its error.
pub(crate) async fn run(
    mut servers: Vec<ServeTask>,
    signal: impl Future<Output = ()>,
    readiness: &Readiness,
    stop: &CancellationToken,
    timing: Timing,
) -> Result<(), Error> {
    tokio::select! {
        r = any_ended(&mut servers) => {
            return r.and(Err(Error::internal("the server stopped on its own")));
        }
        () = signal => {}
    }
    readiness.set_draining();
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
        shutdown_timeout_secs = timing.timeout.as_secs(),
        "closing the listener; waiting for in-flight requests"
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

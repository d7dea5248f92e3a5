//! Stopping an app you serve yourself: the signal to stop at ([`shutdown_signal`]) and what
//! the endpoint needs done then ([`Server::drain`](crate::Server::drain)).

use std::future::Future;

/// Resolves at the next SIGTERM (what Kubernetes, Docker and systemd send) or SIGINT
/// (Ctrl-C); off Unix, at Ctrl-C. The handlers are installed when this is called, not when
/// the future is first polled, so call it before serving: no signal sent after the call is
/// missed, and the process no longer dies at once on SIGTERM.
///
/// The [`Runner`](crate::Runner) drains at this signal by default. An app served by
/// `axum::serve` passes it to `with_graceful_shutdown`, followed by
/// [`Server::drain`](crate::Server::drain) so that long-lived streams end and the graceful
/// shutdown can finish:
///
/// ```no_run
/// use stateless_mcp::Server;
/// use stateless_mcp::transport::http::shutdown_signal;
///
/// # async fn run(server: Server, app: axum::Router) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let stop = shutdown_signal();
/// axum::serve(listener, app)
///     .with_graceful_shutdown(async move {
///         stop.await;
///         server.drain().await;
///     })
///     .await
/// # }
/// ```
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
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

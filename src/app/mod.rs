//! The composition root of the reference server: the one place that wires the server, its
//! fixtures and the HTTP transport together.

mod auth;
mod config;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::serve::ListenerExt as _;

pub use config::{Config, Fixtures};

use crate::notify::{MemoryBus, Notifier};
use crate::protocol::{CachePolicy, CacheScope, Implementation};
use crate::server::ListenLimits;
use crate::{Error, Server, StreamableHttp, fixtures};

/// Builds the server the configuration describes.
pub fn build_server(config: &Config) -> Result<Server, Error> {
    let policy = CachePolicy::new(config.list_ttl_ms, CacheScope::Public);
    let mut builder = Server::builder()
        .server_info(Implementation::new(
            "stateless-mcp",
            env!("CARGO_PKG_VERSION"),
        ))
        .page_size(usize::try_from(config.page_size).unwrap_or(usize::MAX))
        .list_cache(policy)
        .discover_cache(policy)
        .state_ttl(Duration::from_secs(config.state_ttl_secs))
        .notifier(Notifier::new(Arc::new(MemoryBus::new(config.bus_capacity))))
        .listen_limits(
            ListenLimits::default()
                .max_streams(config.max_listen_streams)
                .max_lifetime(config.listen_max_lifetime_secs.map(Duration::from_secs)),
        );
    if let Some(keys) = &config.state_keys {
        builder = builder.state_keys(keys.clone());
    }
    builder = fixtures::demo(builder);
    if config.fixtures == Fixtures::Conformance {
        builder = fixtures::conformance(builder);
    }
    builder.build()
}

/// The HTTP application the configuration describes (with authorization when configured).
pub fn router(config: &Config, server: Server) -> Result<Router, Error> {
    let auth = auth::resource_server(config, &server)?;
    let mut http = StreamableHttp::new(server)
        .path(config.path.clone())
        .body_limit(config.body_limit)
        .keep_alive(Duration::from_secs(config.keepalive_secs));
    if !config.allowed_hosts.is_empty() {
        http = http.allowed_hosts(config.allowed_hosts.clone());
    } else if !config.listen.ip().is_loopback() {
        http = http.allow_any_host();
    }
    if !config.allowed_origins.is_empty() {
        http = http.allowed_origins(config.allowed_origins.clone());
    }
    Ok(auth::protect(auth, http.into_router()))
}

/// Serves until SIGINT or SIGTERM, then stops accepting and lets in-flight requests finish.
pub async fn serve(config: Config) -> Result<(), Error> {
    let server = build_server(&config)?;
    let app = router(&config, server.clone())?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| Error::io(format!("cannot listen on {}", config.listen), e))?;
    let local = listener
        .local_addr()
        .map_err(|e| Error::io("cannot read the bound address", e))?;
    tracing::info!(address = %local, path = %config.path, fixtures = ?config.fixtures, "serving MCP");
    // Small SSE writes must not wait for delayed ACKs.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    let draining = server.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            // Listen streams never end on their own: close them gracefully so the
            // connections drain.
            draining.close_listen_streams();
        })
        .await
        .map_err(|e| Error::io("server failed", e))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}

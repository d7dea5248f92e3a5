//! The composition root of the reference server: the one place that wires the server, its
//! fixtures, the HTTP transport and the operational routes together.
//!
//! # Graceful drain
//!
//! On SIGTERM or SIGINT: `/readyz` answers 503 at once; after `--drain-delay-secs` (or a
//! second signal) the listeners close and the shutdown token given to
//! [`StreamableHttp::shutdown`] is cancelled, so long-lived streams end; connections already
//! open are served for one second more, each response with `Connection: close`, so a
//! proxy's keep-alive pool retires them instead of racing their close; then idle
//! connections close, in-flight requests get `--shutdown-timeout-secs` to finish, and the
//! process exits with status 0.
//!
//! Components that the replica needs (the notification bus) register a readiness condition
//! with the [`Readiness`] created in [`serve_until`] (`readiness.condition("bus")`), so
//! `/readyz` answers 503 while they are down.

mod auth;
mod bus;
mod config;
mod drain;
mod load;
mod logging;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::response::Response;
use axum::serve::ListenerExt as _;
use http::{HeaderName, HeaderValue};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::make::Shared;
use tower::util::MapResponse;

pub use config::{Config, Fixtures, LogFormat};
pub use load::{REDACTED, Setting, Source};
pub use logging::init_logging;

#[cfg(feature = "prometheus")]
use crate::observability::PrometheusMetrics;
use crate::observability::{Readiness, health_router};
use crate::protocol::{CachePolicy, CacheScope, Implementation};
use crate::server::ListenLimits;
use crate::{Error, Server, ServerBuilder, StreamableHttp, fixtures};

/// Builds the server the configuration describes.
pub fn build_server(config: &Config) -> Result<Server, Error> {
    server_builder(config)?.build()
}

/// The builder [`build_server`] finishes: every setting of `config` applied and its
/// fixtures registered, ready for more definitions.
///
/// With a broker-backed `--bus`, this starts its connection in the background (so it must be
/// called within a Tokio runtime); its state is not reported to any readiness check (the
/// reference server's [`serve`] reports it on `/readyz`).
pub fn server_builder(config: &Config) -> Result<ServerBuilder, Error> {
    server_builder_with(config, None)
}

fn server_builder_with(
    config: &Config,
    readiness: Option<&Readiness>,
) -> Result<ServerBuilder, Error> {
    let notifier = bus::notifier(config, readiness.map(|r| r.condition("bus")))?;
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
        .notifier(notifier)
        .replay_store(bus::replay_store(config)?)
        .listen_limits(
            ListenLimits::default()
                .max_streams(config.max_listen_streams)
                .max_lifetime(config.listen_max_lifetime_secs.map(Duration::from_secs)),
        );
    if let Some(keys) = config.state_key_ring()? {
        builder = builder.state_keys(keys);
    }
    builder = fixtures::demo(builder);
    if config.fixtures == Fixtures::Conformance {
        builder = fixtures::conformance(builder);
    }
    Ok(builder)
}

/// The MCP endpoint the configuration describes, with authorization when configured (no
/// health or metrics routes).
pub fn router(config: &Config, server: Server) -> Result<Router, Error> {
    mcp_router(config, server, CancellationToken::new())
}

fn mcp_router(
    config: &Config,
    server: Server,
    shutdown: CancellationToken,
) -> Result<Router, Error> {
    let auth = auth::resource_server(config, &server)?;
    let mut http = StreamableHttp::new(server)
        .shutdown(shutdown)
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

/// The response header that names the replica that answered (`--replica-id`), on every
/// response of the reference server, so a client or a test behind a load balancer can see
/// where each request went.
pub const REPLICA_HEADER: HeaderName = HeaderName::from_static("x-mcp-replica");

/// The routes outside the MCP endpoint: `/healthz`, `/readyz` and (with the `prometheus`
/// feature and a recorder) `/metrics`. They sit outside any auth layer.
pub fn ops_router(
    readiness: &Readiness,
    #[cfg(feature = "prometheus")] metrics: Option<&PrometheusMetrics>,
) -> Router {
    let router = health_router(readiness.clone());
    #[cfg(feature = "prometheus")]
    let router = match metrics {
        Some(m) => router.merge(m.router(crate::observability::METRICS_PATH)),
        None => router,
    };
    router
}

async fn bind(addr: SocketAddr, what: &str) -> Result<(TcpListener, SocketAddr), Error> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| Error::io(format!("cannot listen on {addr} ({what})"), e))?;
    let local = listener
        .local_addr()
        .map_err(|e| Error::io("cannot read the bound address", e))?;
    Ok((listener, local))
}

/// What every response of the reference server gets: the replica's name
/// ([`REPLICA_HEADER`]), and `Connection: close` once the drain has closed the listener (see
/// [`drain`](self#graceful-drain)). One plain map around the whole router: a
/// `Router::layer` would box a future and clone a boxed service on every request.
fn stamped(
    app: Router,
    replica: HeaderValue,
    closed: CancellationToken,
) -> MapResponse<Router, impl FnOnce(Response) -> Response + Clone> {
    MapResponse::new(app, move |mut response: Response| {
        response
            .headers_mut()
            .insert(REPLICA_HEADER, replica.clone());
        drain::close_after(&mut response, &closed);
        response
    })
}

fn spawn_serve(
    listener: TcpListener,
    app: Router,
    replica: &HeaderValue,
    closed: &CancellationToken,
    stop: CancellationToken,
) -> Result<tokio::task::JoinHandle<std::io::Result<()>>, Error> {
    // Small SSE writes must not wait for delayed ACKs.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    let listener = drain::Closing::new(listener, closed.clone())
        .map_err(|e| Error::io("cannot read the bound address", e))?;
    let app = stamped(app, replica.clone(), closed.clone());
    Ok(tokio::spawn(async move {
        axum::serve(listener, Shared::new(app))
            .with_graceful_shutdown(stop.cancelled_owned())
            .await
    }))
}

/// Serves until SIGINT or SIGTERM, then drains (see [`drain`](self#graceful-drain)):
/// `/readyz` turns 503, after `--drain-delay-secs` the listeners stop accepting and the
/// shutdown token is cancelled, in-flight requests get `--shutdown-timeout-secs` to finish.
///
/// Installs the Prometheus recorder (with the `prometheus` feature) unless another recorder
/// is installed, and logs the effective configuration with secrets redacted.
pub async fn serve(config: Config) -> Result<(), Error> {
    // Installed before anything listens, so an early SIGTERM still drains.
    let signal = drain::signal();
    serve_until(config, signal).await
}

/// Like [`serve`], draining when `signal` resolves instead of at SIGINT/SIGTERM (a second
/// SIGINT/SIGTERM still cuts the drain delay short).
pub async fn serve_until(
    config: Config,
    signal: impl std::future::Future<Output = ()>,
) -> Result<(), Error> {
    let readiness = Readiness::new();
    let server = server_builder_with(&config, Some(&readiness))?.build()?;
    // Cancelled when the listeners close; long-lived streams end on it.
    let closed = CancellationToken::new();
    // Cancelled a moment later: idle connections close, the servers finish.
    let shutdown = CancellationToken::new();
    #[cfg(feature = "prometheus")]
    let metrics = match PrometheusMetrics::install() {
        Ok(m) => {
            m.spawn_upkeep(Duration::from_secs(5));
            Some(m)
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics are not served");
            None
        }
    };
    let ops = ops_router(
        &readiness,
        #[cfg(feature = "prometheus")]
        metrics.as_ref(),
    );
    let mcp = mcp_router(&config, server.clone(), closed.clone())?;
    let replica = HeaderValue::from_str(&config.replica_id())
        .unwrap_or_else(|_| HeaderValue::from_static("replica"));
    tracing::info!(settings = %config.effective_line(), "effective configuration");
    let mut servers = Vec::new();
    match config.admin_listen {
        Some(admin) => {
            let (listener, local) = bind(config.listen, "--listen").await?;
            let (admin_listener, admin_local) = bind(admin, "--admin-listen").await?;
            tracing::info!(admin_address = %admin_local, "serving /healthz, /readyz and /metrics");
            tracing::info!(address = %local, path = %config.path, fixtures = ?config.fixtures, "serving MCP");
            servers.push(spawn_serve(
                listener,
                mcp,
                &replica,
                &closed,
                shutdown.clone(),
            )?);
            servers.push(spawn_serve(
                admin_listener,
                ops,
                &replica,
                &closed,
                shutdown.clone(),
            )?);
        }
        None => {
            let (listener, local) = bind(config.listen, "--listen").await?;
            tracing::info!(address = %local, path = %config.path, fixtures = ?config.fixtures, "serving MCP");
            servers.push(spawn_serve(
                listener,
                mcp.merge(ops),
                &replica,
                &closed,
                shutdown.clone(),
            )?);
        }
    }
    bus::spawn_announcement(server, shutdown.clone());
    let timing = drain::Timing {
        delay: Duration::from_secs(config.drain_delay_secs),
        timeout: Duration::from_secs(config.shutdown_timeout_secs),
    };
    drain::run(servers, signal, &readiness, &closed, &shutdown, timing).await
}

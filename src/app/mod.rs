//! The composition root of the reference server: configuration → server builder (settings
//! and fixtures) → [`Runner`].
//!
//! The graceful drain is the runner's (see [`Runner`]): on SIGTERM or SIGINT
//! `/readyz` answers 503 at once; after `--drain-delay-secs` (or a second signal) the
//! listeners close and long-lived streams end; open connections are served for one second
//! more with `Connection: close`; in-flight requests get `--shutdown-timeout-secs` to
//! finish, and the process exits with status 0.
//!
//! Components that the replica needs (the notification bus) register a readiness condition
//! with the [`Readiness`] created in [`serve_until`] (`readiness.condition("bus")`), so
//! `/readyz` answers 503 while they are down; with `--bus-readiness report` the bus's is an
//! advisory condition (`readiness.advisory("bus")`): reported, never failing readiness.

mod auth;
mod builder;
mod bus;
mod config;
mod effective;
mod load;
#[cfg(feature = "reference-server")]
mod logging;
#[cfg(all(feature = "redis", feature = "reference-server"))]
mod runtime_tools;
mod stdio;

use std::time::Duration;

use axum::Router;
use http::{HeaderName, HeaderValue};

pub(crate) use builder::apply;
pub use builder::{build_server, server_builder};
pub use config::{BusReadiness, Config, DpopPolicy, Fixtures, LogFormat, Transport};
pub use effective::{REDACTED, Setting, Source};
#[cfg(feature = "reference-server")]
pub use logging::{Telemetry, init_logging};

#[cfg(feature = "prometheus")]
use crate::observability::PrometheusMetrics;
use crate::observability::{Readiness, health_router};
use crate::{Error, Runner, Server, StreamableHttp};

/// The MCP endpoint the configuration describes, with authorization when configured (no
/// health or metrics routes).
pub fn router(config: &Config, server: Server) -> Result<Router, Error> {
    let auth = auth::resource_server(config, &server)?;
    Ok(auth::protect(auth, endpoint(config, server)?.into_router()))
}

/// The MCP endpoint the configuration describes (without authorization).
pub fn endpoint(config: &Config, server: Server) -> Result<StreamableHttp, Error> {
    let rate_limit = match config.rate_limit() {
        Some(limit) => match bus::rate_store(config)? {
            Some(store) => Some(limit.store(store)),
            None => Some(limit),
        },
        None => None,
    };
    let mut http = StreamableHttp::new(server)
        .path(config.path.clone())
        .body_limit(config.body_limit)
        .keep_alive(Duration::from_secs(config.keepalive_secs))
        .body_timeout(Duration::from_secs(config.body_timeout_secs))
        .max_in_flight(match config.max_in_flight {
            0 => None,
            n => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        })
        .rate_limit(rate_limit);
    if !config.allowed_hosts.is_empty() {
        http = http.allowed_hosts(config.allowed_hosts.clone());
    } else if !config.listen.ip().is_loopback() {
        http = http.allow_any_host();
    }
    if !config.allowed_origins.is_empty() {
        // Browsers on those origins may call the server: CORS from the same list.
        http = http
            .allowed_origins(config.allowed_origins.clone())
            .cors(true);
    }
    Ok(http)
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

/// The runner the configuration describes for `server`: listeners, authorization, probes,
/// metrics (when `metrics` is given), the replica header and the drain timings.
pub fn runner(
    config: &Config,
    server: Server,
    readiness: Readiness,
    #[cfg(feature = "prometheus")] metrics: Option<PrometheusMetrics>,
) -> Result<Runner, Error> {
    let auth = auth::resource_server(config, &server)?;
    let replica = HeaderValue::from_str(&config.replica_id())
        .unwrap_or_else(|_| HeaderValue::from_static("replica"));
    let mut runner = Runner::new(endpoint(config, server)?)
        .listen(config.listen)
        .readiness(readiness)
        .response_header(REPLICA_HEADER, replica)
        .drain_delay(Duration::from_secs(config.drain_delay_secs))
        .shutdown_timeout(Duration::from_secs(config.shutdown_timeout_secs))
        .connection_limits(config.connection_limits());
    runner = auth::protect_runner(auth, runner);
    if let Some(admin) = config.admin_listen {
        runner = runner.admin_listen(admin);
    }
    #[cfg(feature = "prometheus")]
    if let Some(m) = metrics {
        runner = runner.metrics(m);
    }
    Ok(runner)
}

/// Serves until SIGINT or SIGTERM, then drains (see [`Runner`]): `/readyz` turns
/// 503, after `--drain-delay-secs` the listeners stop accepting and long-lived streams end,
/// in-flight requests get `--shutdown-timeout-secs` to finish.
///
/// Installs the Prometheus recorder (with the `prometheus` feature) unless another recorder
/// is installed, and logs the effective configuration with secrets redacted.
pub async fn serve(config: Config) -> Result<(), Error> {
    // Installed before the bus connects and anything listens, so an early SIGTERM drains.
    serve_with(
        config,
        Some(Box::pin(crate::transport::http::shutdown_signal())),
    )
    .await
}

/// The `service.name` of the reference server's spans and metrics unless `OTEL_SERVICE_NAME`
/// says otherwise.
#[cfg(feature = "otel")]
const SERVICE_NAME: &str = "stateless-mcp";

/// Like [`serve`], draining when `signal` resolves instead of at SIGINT/SIGTERM (a second
/// SIGINT/SIGTERM still cuts the drain delay short).
pub async fn serve_until(
    config: Config,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    serve_with(config, Some(Box::pin(signal))).await
}

async fn serve_with(
    config: Config,
    signal: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
) -> Result<(), Error> {
    if config.transport == Transport::Stdio {
        return stdio::serve(config, signal).await;
    }
    // The recorder comes first: the bus reports its connection while the server is built.
    #[cfg(feature = "otel")]
    let otlp_metrics = crate::observability::OtlpMetrics::from_env(SERVICE_NAME)?;
    #[cfg(all(feature = "otel", not(feature = "prometheus")))]
    if let Some(m) = &otlp_metrics {
        if let Err(e) = m.install() {
            tracing::warn!(error = %e, "metrics are not exported");
        }
    }
    #[cfg(feature = "prometheus")]
    let installed = {
        #[cfg(feature = "otel")]
        match &otlp_metrics {
            Some(otlp) => PrometheusMetrics::install_with(otlp),
            None => PrometheusMetrics::install(),
        }
        #[cfg(not(feature = "otel"))]
        PrometheusMetrics::install()
    };
    #[cfg(feature = "prometheus")]
    let metrics = match installed {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::warn!(error = %e, "metrics are not served");
            None
        }
    };
    let readiness = Readiness::new();
    let server = builder::server_builder_with(&config, Some(&readiness))?.build()?;
    #[cfg(all(feature = "redis", feature = "reference-server"))]
    let server_handle = server.clone();
    let runner = runner(
        &config,
        server,
        readiness,
        #[cfg(feature = "prometheus")]
        metrics,
    )?;
    #[cfg(all(feature = "redis", feature = "reference-server"))]
    let runner = match config.runtime_tools {
        true => runner.routes(runtime_tools::start(&config, &server_handle)?),
        false => runner,
    };
    #[cfg(not(all(feature = "redis", feature = "reference-server")))]
    if config.runtime_tools {
        return Err(Error::invalid_definition(
            "--runtime-tools needs the `redis` and `reference-server` features",
        ));
    }
    let runner = match signal {
        Some(s) => runner.shutdown_signal(s),
        None => runner,
    };
    tracing::info!(settings = %config.effective_line(), fixtures = ?config.fixtures, "effective configuration");
    let served = runner.serve().await;
    // After the drain: the last metric export, with the final counts.
    #[cfg(feature = "otel")]
    if let Some(m) = otlp_metrics {
        match tokio::task::spawn_blocking(move || m.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "metric export"),
            Err(e) => tracing::warn!(error = %e, "metric export"),
        }
    }
    served
}

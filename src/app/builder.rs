//! The server builder the configuration describes: every setting applied, the fixtures
//! registered, the notification bus and stores chosen.

use std::time::Duration;

use super::bus;
#[cfg(feature = "reference-server")]
use super::config::Fixtures;
use super::config::{BusReadiness, Config};
use crate::observability::Readiness;
use crate::protocol::{CachePolicy, CacheScope, Implementation};
use crate::server::ListenLimits;
use crate::{Error, Server, ServerBuilder};

/// Builds the server the configuration describes.
pub fn build_server(config: &Config) -> Result<Server, Error> {
    server_builder(config)?.build()
}

/// The builder [`build_server`] finishes: every setting of `config` applied and its
/// fixtures registered, ready for more definitions.
///
/// With a broker-backed `--bus`, this starts its connection in the background (so it must be
/// called within a Tokio runtime); its state is not reported to any readiness check (the
/// reference server's [`serve`](super::serve) reports it on `/readyz`).
pub fn server_builder(config: &Config) -> Result<ServerBuilder, Error> {
    server_builder_with(config, None)
}

/// [`server_builder`] whose broker-backed bus reports to `readiness` when given: a
/// condition named `bus`, advisory with `--bus-readiness report`.
pub(super) fn server_builder_with(
    config: &Config,
    readiness: Option<&Readiness>,
) -> Result<ServerBuilder, Error> {
    let builder = Server::builder().server_info(Implementation::new(
        "stateless-mcp",
        env!("CARGO_PKG_VERSION"),
    ));
    let builder = apply(config, builder, readiness)?;
    #[cfg(feature = "reference-server")]
    let builder = match crate::fixtures::demo(builder) {
        b if config.fixtures == Fixtures::Conformance => crate::fixtures::conformance(b),
        b => b,
    };
    Ok(builder)
}

/// `builder` with every server setting of `config` applied (the bus and stores chosen,
/// reporting to `readiness` when given): what the reference server and
/// [`Settings::apply`](crate::settings::Settings::apply) share.
pub(crate) fn apply(
    config: &Config,
    builder: ServerBuilder,
    readiness: Option<&Readiness>,
) -> Result<ServerBuilder, Error> {
    let condition = readiness.map(|r| match config.bus_readiness {
        BusReadiness::Required => r.condition("bus"),
        BusReadiness::Report => r.advisory("bus"),
    });
    let notifier = bus::notifier(config, condition)?;
    let policy = CachePolicy::new(config.list_ttl_ms, CacheScope::Public);
    let mut builder = builder
        .page_size(usize::try_from(config.page_size).unwrap_or(usize::MAX))
        .list_cache(policy)
        .discover_cache(policy)
        .state_ttl(Duration::from_secs(config.state_ttl_secs))
        .notifier(notifier)
        .replay_store(bus::replay_store(config)?)
        .legacy(config.legacy)
        .session_store(bus::session_store(config)?)
        .session_ttl(Duration::from_secs(config.session_ttl_secs))
        .session_idle(Duration::from_secs(config.session_idle_secs))
        .legacy_input_timeout(Duration::from_secs(config.legacy_input_timeout_secs))
        .task_store(bus::task_store(config)?)
        .task_settings(
            crate::tasks::TaskSettings::default()
                .lease(Duration::from_secs(config.task_lease_secs))
                .ttl(Duration::from_secs(config.task_ttl_secs))
                .max_running(config.task_max_running)
                .max_result_bytes(
                    usize::try_from(config.task_max_result_bytes).unwrap_or(usize::MAX),
                ),
        )
        .idempotency_store(bus::idempotency_store(config)?)
        .event_store(bus::event_store(config)?)
        .resumable_get_streams(config.resumable_get_streams)
        .idempotency(
            crate::settings::IdempotencySettings::default()
                .keep(Duration::from_secs(config.idempotency_keep_secs)),
        )
        .listen_limits(
            ListenLimits::default()
                .max_streams(config.max_listen_streams)
                .max_lifetime(config.listen_max_lifetime_secs.map(Duration::from_secs)),
        );
    if let Some(keys) = config.state_key_ring()? {
        builder = builder.state_keys(keys);
    }
    Ok(builder)
}

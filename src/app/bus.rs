//! The notification bus the configuration selects (`--bus`).

use std::sync::Arc;

use super::Config;
use crate::Error;
use crate::notify::{MemoryBus, Notifier, NotifyBus};
use crate::observability::Condition;

/// The bus `config.bus` names: `memory`, `redis://…` or `nats://…`. A broker-backed bus
/// reports its connection state through `readiness` when given.
pub(super) fn notifier(config: &Config, readiness: Option<Condition>) -> Result<Notifier, Error> {
    let url = config.bus.as_str();
    let scheme = url.split_once("://").map_or(url, |(scheme, _)| scheme);
    #[cfg(any(feature = "redis", feature = "nats"))]
    let options = {
        let options = crate::notify::BusOptions::default()
            .prefix(config.bus_prefix.clone())
            .capacity(config.bus_capacity);
        match readiness {
            Some(c) => options.readiness(c),
            None => options,
        }
    };
    #[cfg(not(any(feature = "redis", feature = "nats")))]
    drop(readiness);
    let bus: Arc<dyn NotifyBus> = match scheme {
        "memory" => Arc::new(MemoryBus::new(config.bus_capacity)),
        #[cfg(feature = "redis")]
        "redis" | "rediss" => Arc::new(crate::notify::RedisBus::connect(url, options)?),
        #[cfg(feature = "nats")]
        "nats" | "tls" => Arc::new(crate::notify::NatsBus::connect(url, options)?),
        other => {
            let feature = if other.starts_with("redis") {
                "redis"
            } else {
                "nats"
            };
            return Err(Error::invalid_definition(format!(
                "--bus (MCP_BUS): this build has no {other} support; rebuild with the `{feature}` feature"
            )));
        }
    };
    Ok(Notifier::new(bus))
}

/// Announces the server's list fingerprints on its bus once it can (a broker-backed bus may
/// still be connecting), so replicas running other versions tell their listen streams.
pub(super) fn spawn_announcement(server: crate::Server, stop: tokio_util::sync::CancellationToken) {
    tokio::spawn(async move {
        let mut delay = std::time::Duration::from_millis(100);
        loop {
            match server.announce_lists().await {
                Ok(()) => {
                    let fp = server.list_fingerprints();
                    tracing::info!(tools = %fp.tools, prompts = %fp.prompts, resources = %fp.resources, "announced list fingerprints");
                    return;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "list fingerprints not announced yet; retrying")
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(delay) => {}
            }
            delay = (delay * 2).min(std::time::Duration::from_secs(5));
        }
    });
}

//! The notification bus the configuration selects (`--bus`), and the shared stores that
//! default to its Redis (`--replay-store`, `--session-store`, `--task-store`,
//! `--idempotency-store`, `--event-store`).

use std::sync::Arc;

use super::Config;
use super::config::backend;
use crate::Error;
use crate::backends::bus::{MemoryBus, NotifyBus};
use crate::backends::replay::{MemoryReplayStore, ReplayStore};
use crate::backends::{MemoryIdempotencyStore, MemorySessionStore};
use crate::extend::{EventStore, IdempotencyStore, SessionStore};
use crate::notify::Notifier;
use crate::observability::Condition;
use crate::tasks::{MemoryTaskStore, TaskStore};

/// The bus `config.bus` names: `memory`, `redis://…` or `nats://…`. A broker-backed bus
/// reports its connection state through `readiness` when given.
pub(super) fn notifier(config: &Config, readiness: Option<Condition>) -> Result<Notifier, Error> {
    let url = config.bus.as_str();
    let scheme = backend(url).unwrap_or(url);
    #[cfg(any(feature = "redis", feature = "nats"))]
    let options = {
        let options = crate::backends::bus::BusOptions::default()
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
        "redis" | "rediss" => Arc::new(crate::backends::bus::RedisBus::connect(url, options)?),
        #[cfg(feature = "nats")]
        "nats" | "tls" => Arc::new(crate::backends::bus::NatsBus::connect(url, options)?),
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

/// The store a `--replay-store` or `--session-store` value names: the value, or by default
/// the bus's Redis when the bus is Redis, else `memory`.
fn store_url<'a>(config: &'a Config, chosen: Option<&'a str>) -> &'a str {
    let bus_is_redis = matches!(backend(&config.bus), Some("redis" | "rediss"));
    match chosen {
        Some(url) => url,
        None if bus_is_redis => config.bus.as_str(),
        None => "memory",
    }
}

/// The legacy session store that `config.session_store` names (by default the bus's Redis
/// when the bus is Redis, else this process's memory).
pub(super) fn session_store(config: &Config) -> Result<Arc<dyn SessionStore>, Error> {
    let url = store_url(config, config.session_store.as_deref());
    if url == "memory" {
        return Ok(Arc::new(MemorySessionStore::default()));
    }
    #[cfg(feature = "redis")]
    {
        Ok(Arc::new(crate::backends::RedisSessionStore::connect(
            url,
            config.bus_prefix.clone(),
        )?))
    }
    #[cfg(not(feature = "redis"))]
    Err(Error::invalid_definition(
        "--session-store (MCP_SESSION_STORE): this build has no redis support; rebuild with the `redis` feature",
    ))
}

/// The replay store for single-use `requestState` that `config.replay_store` names (by
/// default the bus's Redis when the bus is Redis, else this process's memory).
pub(crate) fn replay_store(config: &Config) -> Result<Arc<dyn ReplayStore>, Error> {
    let url = store_url(config, config.replay_store.as_deref());
    if url == "memory" {
        return Ok(Arc::new(MemoryReplayStore::default()));
    }
    #[cfg(feature = "redis")]
    {
        Ok(Arc::new(
            crate::backends::replay::RedisReplayStore::connect(url, config.bus_prefix.clone())?,
        ))
    }
    #[cfg(not(feature = "redis"))]
    Err(Error::invalid_definition(
        "--replay-store (MCP_REPLAY_STORE): this build has no redis support; rebuild with the `redis` feature",
    ))
}

/// The shared rate store `--rate-limit-store` names, `None` for `memory` (the endpoint's
/// own in-process budgets).
pub(super) fn rate_store(
    config: &Config,
) -> Result<Option<Arc<dyn crate::extend::RateStore>>, Error> {
    if config.rate_limit_store == "memory" {
        return Ok(None);
    }
    #[cfg(feature = "redis")]
    {
        Ok(Some(Arc::new(crate::backends::RedisRateStore::connect(
            &config.rate_limit_store,
            config.bus_prefix.clone(),
        )?)))
    }
    #[cfg(not(feature = "redis"))]
    Err(Error::invalid_definition(
        "--rate-limit-store (MCP_RATE_LIMIT_STORE): this build has no redis support; rebuild with the `redis` feature",
    ))
}

/// The task store `config.task_store` names (by default the bus's Redis when the bus is
/// Redis, else this process's memory). On the bus's own Redis, it publishes each status
/// change within the write that makes it
/// ([`RedisTaskStore::announcing_on`](crate::tasks::RedisTaskStore::announcing_on)).
pub(super) fn task_store(config: &Config) -> Result<Arc<dyn TaskStore>, Error> {
    let url = store_url(config, config.task_store.as_deref());
    if url == "memory" {
        return Ok(Arc::new(MemoryTaskStore::default()));
    }
    #[cfg(feature = "redis")]
    {
        let store = crate::tasks::RedisTaskStore::connect(url, config.bus_prefix.clone())?;
        Ok(Arc::new(if url == config.bus {
            let bus = crate::backends::bus::BusOptions::default().prefix(config.bus_prefix.clone());
            store.with_channel(&bus.channel())
        } else {
            store
        }))
    }
    #[cfg(not(feature = "redis"))]
    Err(Error::invalid_definition(
        "--task-store (MCP_TASK_STORE): this build has no redis support; rebuild with the `redis` feature",
    ))
}

/// The event store `config.event_store` names (by default the bus's Redis when the bus is
/// Redis, else this process's memory), with the default limits.
pub(super) fn event_store(config: &Config) -> Result<Arc<dyn EventStore>, Error> {
    let url = store_url(config, config.event_store.as_deref());
    if url == "memory" {
        return Ok(Arc::new(crate::backends::MemoryEventStore::default()));
    }
    #[cfg(feature = "redis")]
    {
        Ok(Arc::new(crate::backends::RedisEventStore::connect(
            url,
            config.bus_prefix.clone(),
            crate::backends::EventLimits::default(),
        )?))
    }
    #[cfg(not(feature = "redis"))]
    Err(Error::invalid_definition(
        "--event-store (MCP_EVENT_STORE): this build has no redis support; rebuild with the `redis` feature",
    ))
}

/// The idempotency store `config.idempotency_store` names (by default the bus's Redis when
/// the bus is Redis, else this process's memory).
pub(super) fn idempotency_store(config: &Config) -> Result<Arc<dyn IdempotencyStore>, Error> {
    let url = store_url(config, config.idempotency_store.as_deref());
    if url == "memory" {
        return Ok(Arc::new(MemoryIdempotencyStore::default()));
    }
    #[cfg(feature = "redis")]
    {
        Ok(Arc::new(crate::backends::RedisIdempotencyStore::connect(
            url,
            config.bus_prefix.clone(),
        )?))
    }
    #[cfg(not(feature = "redis"))]
    Err(Error::invalid_definition(
        "--idempotency-store (MCP_IDEMPOTENCY_STORE): this build has no redis support; rebuild with the `redis` feature",
    ))
}

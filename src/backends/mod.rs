//! Every backend in one place: where the state that replicas share lives, and the bus that
//! carries their change events.
//!
//! Each kind of backend is a trait with documented invariants (in [`extend`](crate::extend),
//! for those who write one), an in-process default that one replica alone sees, and a
//! backend that replicas share:
//!
//! | what | trait | one replica | shared |
//! |---|---|---|---|
//! | change events between replicas | [`NotifyBus`](crate::extend::NotifyBus) | [`MemoryBus`] | [`RedisBus`] (`redis`), [`NatsBus`] (`nats`) |
//! | single-use `requestState` claims, DPoP proof `jti`s | [`ReplayStore`](crate::extend::ReplayStore) | [`MemoryReplayStore`] | [`RedisReplayStore`] (`redis`) |
//! | per-caller and per-tool rate budgets | [`RateStore`](crate::extend::RateStore) | [`MemoryRateStore`] | [`RedisRateStore`] (`redis`) |
//! | legacy (2025-11-25) session settings and revocations | [`SessionStore`](crate::extend::SessionStore) | [`MemorySessionStore`] | [`RedisSessionStore`] (`redis`) |
//! | tasks of the Tasks extension | [`TaskStore`](crate::tasks::TaskStore) | [`MemoryTaskStore`] | [`RedisTaskStore`] (`redis`) |
//! | events of resumable 2025-11-25 streams | [`EventStore`](crate::extend::EventStore) | [`MemoryEventStore`] | [`RedisEventStore`] (`redis`) |
//! | keys and first results of idempotent tool calls | [`IdempotencyStore`](crate::extend::IdempotencyStore) | [`MemoryIdempotencyStore`] | [`RedisIdempotencyStore`] (`redis`) |
//!
//! Each trait's documentation states its contract (what listen streams, sessions and tasks
//! rely on); one contract test suite per trait runs against every backend. The broker-backed
//! ones connect lazily and reconnect on their own ([`BusOptions`] for the
//! buses); their URLs never reach a log with a password in them. The plumbing they share
//! (lazy connections, reconnecting queries, URL redaction, the circuit breaker that makes a
//! store known to be down fail at once) is here too, crate-private.

#[cfg(feature = "redis")]
pub(crate) mod breaker;
pub(crate) mod bus;
pub(crate) mod events;
pub(crate) mod idempotency;
pub(crate) mod rate;
#[cfg(any(feature = "redis", feature = "nats"))]
pub(crate) mod redact;
#[cfg(feature = "redis")]
pub(crate) mod redis_conn;
pub(crate) mod replay;

pub use crate::legacy::store::MemorySessionStore;
#[cfg(feature = "redis")]
pub use crate::legacy::store::RedisSessionStore;
pub use crate::tasks::MemoryTaskStore;
#[cfg(feature = "redis")]
pub use crate::tasks::RedisTaskStore;
#[cfg(feature = "nats")]
pub use bus::NatsBus;
#[cfg(feature = "redis")]
pub use bus::RedisBus;
pub use bus::{BusOptions, MemoryBus};
#[cfg(feature = "redis")]
pub use events::RedisEventStore;
pub use events::{EventLimits, MemoryEventStore};
pub use idempotency::MemoryIdempotencyStore;
#[cfg(feature = "redis")]
pub use idempotency::RedisIdempotencyStore;
#[cfg(feature = "redis")]
pub use rate::RedisRateStore;
pub use rate::{Budget, MemoryRateStore, Verdict};
pub use replay::MemoryReplayStore;
#[cfg(feature = "redis")]
pub use replay::RedisReplayStore;

//! Change notifications: the [`Notifier`] handle application code announces changes through,
//! and the [`NotifyBus`] that carries them to every replica holding a `subscriptions/listen`
//! stream.
//!
//! # The bus contract
//!
//! Every [`NotifyBus`] implementation keeps these promises, and listen streams rely on no
//! more:
//!
//! - **Best effort.** An event published while a subscriber exists reaches it unless the
//!   subscriber lags or the bus loses its connection; in both cases the subscriber is told
//!   ([`Delivery::Resync`]) instead of being left in silence.
//! - **No ordering across publishers.** Events from one publisher on one replica arrive in
//!   order; events from different publishers or replicas may interleave in any order.
//! - **Bounded memory.** Each replica keeps one ring of at most `capacity` events shared by
//!   all its subscribers. A subscriber that falls more than `capacity` events behind skips to
//!   the newest events and receives one [`Delivery::Resync`]; a listen stream answers it by
//!   sending every list-changed notification it subscribed to (and `resources/updated` for
//!   each subscribed URI), so the client re-reads what it cares about. A stalled subscriber
//!   therefore never grows memory.
//! - **Events, not state.** Events are small, serializable ([`ChangeEvent`]), and carry
//!   nothing about any client.
//!
//! - **Reconnects resync.** A broker-backed bus that loses its connection reports it (its
//!   readiness condition, `mcp_bus_connected`) and, once reconnected, sends every local
//!   subscriber one [`Delivery::Resync`], since events published meanwhile are lost.
//! - **Clean shutdown.** Dropping the last handle of a bus stops its background work and
//!   closes its connections; its subscribers then receive `None`.
//!
//! # Backends
//!
//! | bus | feature | replicas | |
//! |---|---|---|---|
//! | [`MemoryBus`] | always | one process | the default |
//! | [`RedisBus`] | `redis` | any number | Redis pub/sub; see its wire format |
//! | [`NatsBus`] | `nats` | any number | NATS core pub/sub |
//!
//! A cross-replica backend publishes to a broker and feeds what it receives into a
//! [`Fanout`], which gives every backend the same local semantics. Events travel as the JSON
//! of [`ChangeEvent`], so programs other than the server can publish them too.

mod bus;
mod event;
mod link;
mod memory;
#[cfg(feature = "nats")]
mod nats;
mod notifier;
#[cfg(feature = "redis")]
mod redis;

pub use bus::{BusReceiver, Delivery, Fanout, NotifyBus};
pub use event::{ChangeEvent, ListFingerprints, TaskChange};
pub use link::{BusOptions, MAX_EVENT_BYTES};
pub(crate) use memory::DEFAULT_CAPACITY;
pub use memory::MemoryBus;
#[cfg(feature = "nats")]
pub use nats::NatsBus;
pub use notifier::Notifier;
#[cfg(feature = "redis")]
pub use redis::RedisBus;

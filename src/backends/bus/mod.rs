//! The buses: what carries change events to every replica.
//!
//! The contract every bus keeps is on [`NotifyBus`]; the buses that ship are listed in
//! [`crate::backends`].

mod contract;
mod link;
mod memory;
#[cfg(feature = "nats")]
mod nats;
#[cfg(feature = "redis")]
mod redis;

pub use contract::{BusReceiver, Delivery, Fanout, NotifyBus};
pub use link::{BusOptions, MAX_EVENT_BYTES};
pub(crate) use memory::DEFAULT_CAPACITY;
pub use memory::MemoryBus;
#[cfg(feature = "nats")]
pub use nats::NatsBus;
#[cfg(feature = "redis")]
pub use redis::RedisBus;

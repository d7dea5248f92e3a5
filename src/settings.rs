//! What a deployment tunes beyond the handlers: the key ring that seals `requestState` and
//! legacy session ids ([`StateKeys`], shared by every replica), the bounds on listen streams
//! ([`ListenLimits`]) and on the runner's connections ([`ConnectionLimits`]), how idempotent
//! tool calls keep their results ([`IdempotencySettings`]). Each goes to
//! the builder that takes it ([`ServerBuilder`](crate::ServerBuilder),
//! [`Runner`](crate::Runner)).
//!
//! With the `config` feature, [`Settings`] loads all of them (and the bus, stores,
//! endpoint limits and authorization) from the reference server's `MCP_*` environment
//! variables and config file, for your own binary.

#[cfg(feature = "config")]
mod from_env;

pub use crate::runner::ConnectionLimits;
pub use crate::server::{IdempotencySettings, ListenLimits, StateKeys, StateKeysError};
#[cfg(feature = "config")]
pub use from_env::Settings;

//! Replay protection for single-use `requestState`: the [`ReplayStore`] contract and the
//! stores that ship.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::time::SystemTime;

use futures_util::future::BoxFuture;

use crate::Error;

pub use memory::MemoryReplayStore;
#[cfg(feature = "redis")]
pub use redis::RedisReplayStore;

/// Remembers which single-use states were used: replay protection for single-use
/// `requestState`.
///
/// A handler can mark the state of an `input_required` answer as single-use
/// ([`InputRequired::single_use`](crate::InputRequired::single_use)). The sealed state then
/// carries a random id, and before the retry that brings it back runs, the server *claims*
/// that id in a [`ReplayStore`]: the first claim wins, every later one (on any replica that
/// shares the store) is refused with `-32602` and `data.reason = "replayed"`. A claimed id is
/// remembered until the state would have expired anyway, so the store never grows beyond the
/// ids of states still alive.
///
/// | store | feature | replicas |
/// |---|---|---|
/// | [`MemoryReplayStore`] | always | one process (the default) |
/// | [`RedisReplayStore`] | `redis` | all replicas sharing the Redis (`SET NX` with the state's expiry) |
///
/// If the store cannot be reached, the retry fails with `-32603` (single-use is a security
/// property: it fails closed).
pub trait ReplayStore: Send + Sync + 'static {
    /// Records `id` as used until `expires`. `Ok(true)` for the first claim of `id`,
    /// `Ok(false)` when it was claimed before (and has not expired); an error when the store
    /// could not answer.
    fn claim<'a>(&'a self, id: &'a str, expires: SystemTime) -> BoxFuture<'a, Result<bool, Error>>;
}

//! Rate budgets that replicas share: the [`RateStore`] contract and the stores that ship.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::num::NonZeroU32;
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::Error;

pub use memory::MemoryRateStore;
#[cfg(feature = "redis")]
pub use redis::RedisRateStore;

/// A budget: `per_second` requests on average, in bursts of up to `burst` (a GCRA token
/// bucket: one request's worth comes back every `1/per_second` s, up to `burst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Budget {
    /// The average rate.
    pub per_second: NonZeroU32,
    /// The largest burst.
    pub burst: NonZeroU32,
}

impl Budget {
    /// `per_second` on average, bursts of `burst`.
    pub fn new(per_second: NonZeroU32, burst: NonZeroU32) -> Self {
        Budget { per_second, burst }
    }

    /// The time one request's worth takes to come back.
    pub fn interval(&self) -> Duration {
        Duration::from_secs(1) / self.per_second.get()
    }
}

/// What a [`RateStore`] says about one budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// Whether this budget had room for the request.
    pub admitted: bool,
    /// Requests the budget still has room for right now.
    pub remaining: u32,
    /// How long until the budget is full again.
    pub reset: Duration,
    /// When refused, how long until it has room for one request.
    pub retry_after: Duration,
}

impl Verdict {
    /// Room was left: `remaining` more now, full again after `reset`.
    pub fn admitted(remaining: u32, reset: Duration) -> Self {
        Verdict {
            admitted: true,
            remaining,
            reset,
            retry_after: Duration::ZERO,
        }
    }

    /// No room: one request fits after `retry_after`, the budget is full after `reset`.
    pub fn refused(retry_after: Duration, reset: Duration) -> Self {
        Verdict {
            admitted: false,
            remaining: 0,
            reset,
            retry_after,
        }
    }
}

/// Keeps rate budgets: the per-caller and per-tool limits of
/// [`RateLimit`](crate::transport::http::RateLimit).
///
/// # Contract
///
/// - [`check`](RateStore::check) charges one request to each `(key, budget)` it is given
///   and answers one [`Verdict`] per pair, in order. The request may go on when every
///   verdict admits it.
/// - A budget that refuses is not charged, so a caller over its limit does not push its
///   own retry further away. When all admit, all are charged. When some refuse, the
///   others may or may not be charged (the Redis store charges none; the in-process store
///   charges those before the first refusal).
/// - Budgets of different keys are independent; the same key with the same budget is one
///   budget for every caller of the store (every replica, for a shared store).
/// - `retry_after` of a refusing verdict is how long until one request fits; `remaining`
///   and `reset` describe the budget after this check.
/// - An error means the store could not answer; the HTTP limiter then answers from its
///   in-process store (and counts it in `mcp_rate_limit_fallbacks_total`).
///
/// | store | feature | replicas |
/// |---|---|---|
/// | [`MemoryRateStore`] | always | one process (the default) |
/// | [`RedisRateStore`] | `redis` | all replicas sharing the Redis (one Lua script, GCRA, per check) |
pub trait RateStore: Send + Sync + 'static {
    /// Charges one request to each `(key, budget)`; see the contract above.
    fn check<'a>(
        &'a self,
        checks: &'a [(&'a str, Budget)],
    ) -> BoxFuture<'a, Result<Vec<Verdict>, Error>>;
}

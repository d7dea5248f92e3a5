//! Idempotent tool calls: the [`IdempotencyStore`] contract and the stores that ship.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use crate::Error;

pub use memory::MemoryIdempotencyStore;
#[cfg(feature = "redis")]
pub use redis::RedisIdempotencyStore;

/// What [`IdempotencyStore::claim`] found under a key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdempotencyClaim {
    /// The key was free (or its earlier claim lapsed, or it is this `owner`'s own claim
    /// again): the caller runs the call, then [completes](IdempotencyStore::complete) or
    /// [releases](IdempotencyStore::release) it.
    Claimed,
    /// A call with this key and the same fingerprint is running (claimed by another owner,
    /// whose lease has not lapsed).
    InFlight,
    /// A call with this key and the same fingerprint finished: the result it stored.
    Done(Bytes),
    /// The key is held (running or finished) by a call with another fingerprint.
    Conflict,
}

/// Where idempotent tool calls keep their keys and first results, shared by the replicas.
///
/// A tool that opts in ([`ToolDef::idempotency_keys`](crate::ToolDef::idempotency_keys)) and is
/// called with an idempotency key runs its handler at most once per key while the key is
/// kept: the server [claims](Self::claim) the key with the fingerprint of the arguments and a
/// random owner name, runs the handler, and [completes](Self::complete) the key with the
/// encoded result; a retry finds that result and is answered with it. The keys a server
/// hands a store are digests already scoped to the caller, protocol version and tool.
///
/// The contract every store keeps (one contract test suite runs it against each):
/// - `claim` of an unknown key (or one whose claim or result has expired) records
///   `fingerprint` and `owner` for `lease` and answers [`IdempotencyClaim::Claimed`]; of a key
///   held with another fingerprint, [`Conflict`](IdempotencyClaim::Conflict); with the same
///   fingerprint, [`Done`](IdempotencyClaim::Done) with the stored result once completed,
///   else `Claimed` for the same owner and [`InFlight`](IdempotencyClaim::InFlight) for any
///   other. Claims are atomic: of concurrent claims of a free key (on any replica), exactly
///   one is `Claimed`.
/// - `complete` stores `result` under a key `owner` holds and keeps it for `keep` (from
///   then); `Ok(false)` when `owner` no longer holds it (its lease lapsed and another took
///   it), and nothing changes.
/// - `release` forgets a key `owner` holds that has no result yet (the call failed or asked
///   for input: nothing to replay), so a retry runs the call; anything else is left alone.
/// - Every operation may be retried after a lost answer with the same outcome.
///
/// | store | feature | replicas |
/// |---|---|---|
/// | [`MemoryIdempotencyStore`] | always | one process (the default) |
/// | [`RedisIdempotencyStore`] | `redis` | all replicas sharing the Redis (one Lua script per operation) |
///
/// If the store cannot be reached the call is refused with a retryable error (HTTP 503 with
/// `Retry-After`), never run unguarded: idempotency fails closed.
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Claims `key` for a call whose arguments have `fingerprint`, by `owner`, for `lease`.
    fn claim<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        owner: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<IdempotencyClaim, Error>>;

    /// Stores the finished call's `result` under `key` (held by `owner`) for `keep`.
    /// `Ok(false)` when `owner` no longer holds the key.
    fn complete<'a>(
        &'a self,
        key: &'a str,
        owner: &'a str,
        result: Bytes,
        keep: Duration,
    ) -> BoxFuture<'a, Result<bool, Error>>;

    /// Forgets `key` if `owner` holds it and it has no result.
    fn release<'a>(&'a self, key: &'a str, owner: &'a str) -> BoxFuture<'a, Result<(), Error>>;
}

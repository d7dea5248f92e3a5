//! What several replicas must agree on about a legacy (2025-11-25) session: the settings a
//! client changes during it (`logging/setLevel`, `resources/subscribe`/`unsubscribe`) and
//! whether it was ended (`DELETE`).
//!
//! A legacy session itself lives in its `Mcp-Session-Id`, a sealed token any replica opens
//! (protocol version, client capabilities, clientInfo, caller, issue time); no replica keeps
//! it. Only what *changes* after `initialize` is kept here, in a [`SessionStore`] shared by
//! every replica, keyed by the random part sealed inside the session id (never the id
//! itself) and forgotten when the session would expire anyway.
//!
//! | store | feature | replicas |
//! |---|---|---|
//! | [`MemorySessionStore`] | always | one process (the default) |
//! | [`RedisSessionStore`] | `redis` | all replicas sharing the Redis (one hash per session, `PEXPIREAT`) |
//!
//! # The store contract
//!
//! Every implementation keeps these promises (the contract test suite checks each backend):
//!
//! - **Read your writes, on any replica.** Once a write returned `Ok`, a later
//!   [`load`](SessionStore::load) of the same session, through any handle on the same store,
//!   sees it.
//! - **Revocation is final.** After [`revoke`](SessionStore::revoke) the session loads as
//!   revoked until it expires; nothing un-revokes it.
//! - **Bounded.** A session holds at most [`MAX_SESSION_SUBSCRIPTIONS`] subscriptions
//!   ([`subscribe`](SessionStore::subscribe) answers `Ok(false)` beyond); every entry is
//!   dropped at the expiry it was written with.
//! - **Unknown is empty.** A session nothing was written for loads as the default
//!   [`SessionSettings`] (no level, no subscriptions, not revoked).
//! - **Fails loudly.** A store that cannot answer returns an error
//!   ([`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)); callers fail the request
//!   rather than guess (a revoked session must never be taken for a live one).

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::collections::BTreeSet;
use std::time::SystemTime;

use futures_util::future::BoxFuture;

use crate::Error;
use crate::protocol::LoggingLevel;

pub use memory::MemorySessionStore;
#[cfg(feature = "redis")]
pub use redis::RedisSessionStore;

/// The most resource URIs one legacy session may subscribe to.
pub const MAX_SESSION_SUBSCRIPTIONS: usize = 1_000;

/// What a legacy session changed since `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionSettings {
    /// The level `logging/setLevel` set; without one the session gets no log messages.
    pub log_level: Option<LoggingLevel>,
    /// The resource URIs `resources/subscribe` added (and `unsubscribe` did not remove).
    pub subscriptions: BTreeSet<String>,
    /// Whether the session was ended with `DELETE`.
    pub revoked: bool,
    /// When a replica last recorded the session in use ([`touch`](SessionStore::touch)),
    /// for the idle limit (`ServerBuilder::session_idle`); `None` when never.
    pub last_used: Option<SystemTime>,
}

/// Where legacy sessions' settings and revocations are kept, shared by every replica
/// ([`ServerBuilder::session_store`](crate::ServerBuilder::session_store)); the stores that
/// ship are in [`backends`](crate::backends).
///
///  # Contract
///
///  Every implementation keeps these promises (the contract test suite checks each backend):
///
///  - **Read your writes, on any replica.** Once a write returned `Ok`, a later
///    [`load`](SessionStore::load) of the same session, through any handle on the same store,
///    sees it.
///  - **Revocation is final.** After [`revoke`](SessionStore::revoke) the session loads as
///    revoked until it expires; nothing un-revokes it.
///  - **Bounded.** A session holds at most [`MAX_SESSION_SUBSCRIPTIONS`] subscriptions
///    ([`subscribe`](SessionStore::subscribe) answers `Ok(false)` beyond); every entry is
///    dropped at the expiry it was written with.
///  - **Unknown is empty.** A session nothing was written for loads as the default
///    [`SessionSettings`] (no level, no subscriptions, not revoked).
///  - **Fails loudly.** A store that cannot answer returns an error
///    ([`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)); callers fail the request
///    rather than guess (a revoked session must never be taken for a live one).
///
/// `session` is the store key of a session (the random part sealed inside its id, never the
/// id itself);
/// `expires` is when the session itself expires: the entry may be dropped from then on.
pub trait SessionStore: Send + Sync + 'static {
    /// The session's settings; the default ones when nothing was recorded.
    fn load<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<SessionSettings, Error>>;

    /// Sets the session's log level.
    fn set_log_level<'a>(
        &'a self,
        session: &'a str,
        level: LoggingLevel,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>>;

    /// Adds `uri` to the session's subscriptions: `Ok(true)` when it is subscribed now (also
    /// when it was already), `Ok(false)` when the session holds
    /// [`MAX_SESSION_SUBSCRIPTIONS`] others already.
    fn subscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<bool, Error>>;

    /// Removes `uri` from the session's subscriptions (nothing happens if it was not there).
    fn unsubscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), Error>>;

    /// Records the session in use at `at` (sliding expiry): a later [`load`](Self::load)
    /// on any replica reads `last_used` as `at` (or later). The server calls it at most about
    /// once per half idle limit per session, not on every request.
    fn touch<'a>(
        &'a self,
        session: &'a str,
        at: SystemTime,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>>;

    /// Ends the session: it loads as revoked until `expires`.
    fn revoke<'a>(
        &'a self,
        session: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>>;
}

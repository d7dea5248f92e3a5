//! Legacy (2025-11-25) clients on the same endpoint, served by any replica without sticky
//! sessions.
//!
//! A request is classified before the 2026 ladder ([`classify`]); a legacy one comes here.
//! `initialize` answers the negotiated version, the capabilities the registered handlers
//! give, `serverInfo`, and an `Mcp-Session-Id` that is a sealed token ([`session`]) any
//! replica opens. What changes during a session (`logging/setLevel`,
//! `resources/subscribe`/`unsubscribe`) and its end (`DELETE`) go to the shared
//! [`SessionStore`](crate::session::SessionStore); a change is announced on the bus so the
//! replica holding the session's GET stream ([`stream`]) hears it. The methods both
//! revisions share run the same code as on the 2026 path, with a `_meta` made from the
//! session; a handler's `InputRequired` becomes server-to-client requests on the request's
//! own stream ([`ask`]), whose answers may land on any replica ([`pending`]).
//!
//! | file | what |
//! |---|---|
//! | `classify` | which revision a request speaks |
//! | `session` | the sealed session id |
//! | `session_cache` | session ids this replica opened lately, opened once |
//! | `dispatch` | the POST path: handshake, session check, the legacy-only methods, then the shared ones |
//! | `ask` | `InputRequired` as server-to-client requests, and the rounds of a call |
//! | `pending` | requests waiting for answers, answers routed here or over the bus |
//! | `stream` | the GET stream |
//! | `endpoints` | GET (open the stream) and DELETE (end the session) |
//! | `local` | answers read by a one-client transport (stdio), delivered in this process only |
//!
//! May import: the rest of `server` (ladder, methods, runner, listen, seal), `session`,
//! `notify`, `protocol`, `handler`. Nothing in `server` outside this module imports it
//! except the ladder's entry and the builder.

mod ask;
pub(crate) mod classify;
mod dispatch;
mod endpoints;
mod local;
mod pending;
pub(crate) mod session;
mod session_cache;
mod stream;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use ask::Asker;
pub use classify::{Era, classify};
pub use dispatch::LegacyOutcome;
pub(crate) use pending::Pending;
pub(crate) use session_cache::SessionCache;

use crate::protocol::ServerCapabilities;
use crate::session::SessionStore;

/// How long a legacy session lasts by default.
pub(crate) const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(24 * 3600);
/// How long a call waits for a legacy client's answer by default.
pub(crate) const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(300);

/// The replica-wide legacy state.
pub(crate) struct Legacy {
    /// Whether legacy requests are served at all (off: today's 2026-only behaviour).
    pub(crate) enabled: bool,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) session_ttl: Duration,
    pub(crate) input_timeout: Duration,
    pub(crate) pending: Arc<Pending>,
    /// The session ids this replica opened lately (CPU only: the store is still read).
    pub(crate) sessions: SessionCache,
    /// What `initialize` advertises (the same as `server/discover`).
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
}

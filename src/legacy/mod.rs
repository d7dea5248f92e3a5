//! Legacy (2025-11-25) clients on the same endpoint, served by any replica without sticky
//! sessions.
//!
//! A request is classified before the 2026 ladder ([`classify`]); a legacy one comes here.
//! `initialize` answers the negotiated version, the capabilities the registered handlers
//! give, `serverInfo`, and an `Mcp-Session-Id` that is a sealed token ([`session`]) any
//! replica opens. What changes during a session (`logging/setLevel`,
//! `resources/subscribe`/`unsubscribe`) and its end (`DELETE`) go to the shared
//! [`SessionStore`](crate::extend::SessionStore); a change is announced on the bus so the
//! replica holding the session's GET stream ([`stream`]) hears it. The methods both
//! revisions share run the same code as on the 2026 path, with a `_meta` made from the
//! session; a handler's `InputRequired` becomes server-to-client requests on the request's
//! own stream ([`ask`]), whose answers may land on any replica ([`pending`]).
//!
//! The wing holds a [`Server`] and calls it; the core never calls the wing. Its state (the
//! settings, the requests waiting for answers, the session ids opened and the settings loaded
//! lately) is kept by the
//! core for it ([`Server::wing`]); [`Legacy::of`] pairs the two.
//!
//! | file | what |
//! |---|---|
//! | `classify` | which revision a request speaks |
//! | `session` | the sealed session id |
//! | `session_cache` | session ids this replica opened lately, opened once |
//! | `settings_cache` | session settings this replica loaded lately, dropped when the bus announces a change |
//! | `store/` | the shared store of what changes during a session (trait, memory, Redis) |
//! | `dispatch` | the POST path: handshake, session check, the legacy-only methods, then the shared ones |
//! | `ask` | `InputRequired` as server-to-client requests (the core's `AskClient` for this era) |
//! | `pending` | requests waiting for answers, answers routed here or over the bus |
//! | `stream` | the GET stream |
//! | `resume` | resumable POST streams: event ids, the event store, `Last-Event-ID` on any replica |
//! | `kept` | resumable GET streams (opt-in): the GET stream kept in the event store, resumed with a resync |
//! | `endpoints` | GET (open the stream) and DELETE (end the session) |
//! | `local` | answers read by a one-client transport (stdio), delivered in this process only |
//! | `http` | the HTTP side: `Mcp-Session-Id`, statuses of refusals, GET/DELETE/POST responses |
//! | `stdio` | the stdio side: the session of a one-client process and its notifications |
//! | `words` | the era's own words: results and capabilities without what only 2026-07-28 defines |

mod ask;
mod bounded;
pub(crate) mod classify;
mod dispatch;
mod endpoints;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzz;
pub(crate) mod http;
mod kept;
mod local;
mod pending;
mod resume;
pub(crate) mod session;
mod session_cache;
mod settings_cache;
pub(crate) mod stdio;
pub(crate) mod store;
mod stream;
mod words;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use dispatch::LegacyOutcome;
use pending::Pending;
use session_cache::SessionCache;
use settings_cache::SettingsCache;

use crate::protocol::ServerCapabilities;
use crate::server::Server;
use store::SessionStore;

/// How long a legacy session lasts by default.
pub(crate) const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(24 * 3600);
/// How long a call waits for a legacy client's answer by default.
pub(crate) const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(300);

/// What the builder sets for legacy sessions.
pub(crate) struct Settings {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) session_ttl: Duration,
    /// The idle limit: a session unused for longer ends (sliding expiry); `None`: only the
    /// hard limit `session_ttl`.
    pub(crate) session_idle: Option<Duration>,
    pub(crate) input_timeout: Duration,
    /// Where the events of resumable POST (and, when on, GET) streams are kept.
    pub(crate) events: Arc<dyn crate::backends::events::EventStore>,
    /// Whether GET streams are kept in `events` too, so they resume ([`kept`]).
    pub(crate) resumable_get: bool,
    /// What `server/discover` advertises; `initialize` advertises what 2025-11-25 defines
    /// of it.
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
}

/// The replica-wide legacy state, kept by the core for the wing.
pub(crate) struct State {
    settings: Settings,
    pending: Arc<Pending>,
    /// The session ids this replica opened lately (CPU only: the store is still read).
    sessions: SessionCache,
    /// The session settings this replica loaded lately from the store (on a shared bus).
    settings_cache: SettingsCache,
}

impl State {
    /// The state of a server that serves legacy clients with `settings`, announcing
    /// changes through `notifier` (on a shared bus, session settings are cached between
    /// its announcements; see `settings_cache`).
    pub(crate) fn new(mut settings: Settings, notifier: &crate::notify::Notifier) -> Self {
        settings.capabilities = words::capabilities(settings.capabilities);
        State {
            settings,
            pending: Arc::new(Pending::new()),
            sessions: SessionCache::default(),
            settings_cache: SettingsCache::new(notifier.is_shared().then(|| notifier.subscribe())),
        }
    }
}

/// Why the legacy path refused a request. Only its HTTP side ([`http`]) maps a refusal to a
/// status; other transports send the JSON-RPC error alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not a JSON-RPC message the session path can read.
    Malformed,
    /// No `Mcp-Session-Id` on a request that needs one.
    Missing,
    /// The id names no live session of this caller (the client initializes again).
    Unknown,
    /// The session store could not answer, or the replica holds its maximum of streams.
    Unavailable,
    /// An answer too large to travel to the replica holding its request.
    TooLarge,
}

/// The 2025-11-25 wing of a server: the server, and the state its core keeps for the wing.
#[derive(Clone)]
pub(crate) struct Legacy {
    server: Server,
    state: Arc<State>,
}

impl Legacy {
    /// The wing of `server`, when it serves legacy clients (`None`: 2026-07-28 only).
    pub(crate) fn of(server: &Server) -> Option<Legacy> {
        server.wing::<State>().map(|state| Legacy {
            server: server.clone(),
            state,
        })
    }

    /// The server the wing calls.
    pub(crate) fn server(&self) -> &Server {
        &self.server
    }
}

/// What every legacy exchange over HTTP brings besides the wing: the request's mirrored
/// headers (its labels), the client's session id and its extensions.
pub(crate) struct HttpRequest<'a> {
    /// The request's mirrored headers.
    pub(crate) mirror: &'a crate::server::MirroredHeaders<'a>,
    /// Its `Mcp-Session-Id`.
    pub(crate) session: Option<&'a str>,
    /// Its extensions (the principal, …).
    pub(crate) extensions: ::http::Extensions,
    /// The SSE keep-alive interval.
    pub(crate) keep_alive: Duration,
}

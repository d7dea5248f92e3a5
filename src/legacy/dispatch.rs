//! The POST path of a legacy client: the envelope, the handshake (`initialize`, which needs
//! no session), the session check for everything else (missing `Mcp-Session-Id`: refused as
//! [`Refusal::Missing`]; not a live session of this caller, or deleted:
//! [`Refusal::Unknown`]), the methods only legacy clients have, then the methods both
//! revisions share, run by the core's ladder with this era's way of asking for input.
//!
//! A refusal travels as a JSON-RPC error plus its [`Refusal`]; the HTTP side maps it to a
//! status, and sends the other JSON-RPC errors with HTTP 200 (as the 2025-11-25 reference
//! server does).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::Extensions;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::ask::Asker;
use super::pending::Delivered;
use super::resume::Resumable;
use super::session::{self, Refused, Session};
use super::settings_cache::Ticket;
use super::store::{MAX_SESSION_SUBSCRIPTIONS, SessionSettings};
use super::{Legacy, Refusal};
use crate::backends::bus::{Delivery, MAX_EVENT_BYTES};
use crate::handler::Principal;
use crate::notify::ChangeEvent;
use crate::observability::{RequestProbe, metrics};
use crate::protocol::legacy::{
    INITIALIZE, InitializeParams, InitializeResult, LOGGING_SET_LEVEL, PING, RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE, SetLevelParams, SubscribeParams, negotiate_version,
};
use crate::protocol::methods::{DISCOVER, SUBSCRIPTIONS_LISTEN};
use crate::protocol::strict::json_str;
use crate::protocol::{ErrorObject, IdField, JsonObject, MetaWire, RequestId};
use crate::server::envelope::{self, Meta, ParamsView};
use crate::server::{Ask, Observed, Outcome, Reply};

/// What the legacy path hands back to a transport.
#[derive(Debug)]
pub(crate) struct LegacyOutcome {
    /// What to send, as on the 2026 path.
    pub(crate) outcome: Outcome,
    /// Why the request was refused, when it was (its HTTP status is the HTTP side's).
    pub(crate) refusal: Option<Refusal>,
    /// The `Mcp-Session-Id` to send back (after `initialize`).
    pub(crate) session_id: Option<String>,
    /// Where the request's stream is kept when it becomes one (a running handler of a
    /// session).
    pub(crate) resumable: Option<Resumable>,
}

impl LegacyOutcome {
    pub(super) fn of(outcome: Outcome) -> Self {
        LegacyOutcome {
            outcome,
            refusal: None,
            session_id: None,
            resumable: None,
        }
    }

    pub(super) fn refused(id: Option<RequestId>, error: ErrorObject, why: Refusal) -> Self {
        Self::refused_with(Reply::error(id, error), why)
    }

    pub(super) fn refused_with(reply: Reply, why: Refusal) -> Self {
        LegacyOutcome {
            outcome: Outcome::Ready(reply),
            refusal: Some(why),
            session_id: None,
            resumable: None,
        }
    }
}

/// Over a transport without statuses (stdio) a legacy exchange is observed as a 2026 one:
/// by its JSON-RPC outcome.
impl Observed for LegacyOutcome {
    fn observed(mut self, probe: RequestProbe) -> Self {
        self.outcome = self.outcome.observed(probe);
        self
    }
}

/// `{"params": P}` of a request body.
#[derive(Deserialize)]
struct WithParams<P> {
    params: P,
}

fn params<'a, P: Deserialize<'a>>(body: &'a [u8], method: &str) -> Result<P, ErrorObject> {
    serde_json::from_slice::<WithParams<P>>(body)
        .map(|w| w.params)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params of {method}: {e}")))
}

fn empty(id: &RequestId) -> Outcome {
    Outcome::Ready(Reply::result(id, &JsonObject::new()))
}

/// How long a replica that changed a session's settings waits for its announcement to
/// come back over a shared bus before it answers.
const ECHO_WAIT: Duration = Duration::from_millis(100);

/// A session refused: a JSON-RPC error naming why.
fn refused(id: Option<RequestId>, why: Refused) -> LegacyOutcome {
    let refusal = match why {
        Refused::Missing => Refusal::Missing,
        Refused::Unknown(_) => Refusal::Unknown,
    };
    LegacyOutcome::refused(id, ErrorObject::invalid_request(why.message()), refusal)
}

/// The session store cannot answer: the one store-unavailable answer (503,
/// `Retry-After: 1`).
pub(super) fn unavailable(id: Option<RequestId>, e: &crate::Error) -> LegacyOutcome {
    LegacyOutcome::refused_with(
        Reply::store_unavailable(id, "session", e),
        Refusal::Unavailable,
    )
}

/// How long `session` has not been used as of `now`, by the last use `settings` recorded
/// (or its issue).
fn quiet(session: &Session, settings: &SessionSettings, now: SystemTime) -> Duration {
    let last = settings
        .last_used
        .map_or(session.issued, |t| t.max(session.issued));
    now.duration_since(last).unwrap_or_default()
}

/// A message the session path cannot read.
fn malformed(id: Option<RequestId>, error: ErrorObject) -> LegacyOutcome {
    LegacyOutcome::refused(id, error, Refusal::Malformed)
}

impl Legacy {
    /// Opens a request's session and loads its settings: refused when missing (400),
    /// unknown or deleted (404); `Err` with 503 when the store cannot answer.
    pub(super) async fn session(
        &self,
        id: Option<&RequestId>,
        session_id: Option<&str>,
        principal: Option<&Principal>,
    ) -> Result<(Session, SessionSettings), LegacyOutcome> {
        let state = &self.state;
        let session = state
            .sessions
            .open(
                self.server.sealer().keys(),
                session_id,
                principal,
                state.settings.session_ttl,
            )
            .map_err(|why| {
                if let Refused::Unknown(reason) = why {
                    tracing::debug!(reason, "refused a legacy session id");
                    if reason == session::EXPIRED {
                        metrics::record_legacy_session_expired("hard");
                    }
                }
                refused(id.cloned(), why)
            })?;
        let cache = &state.settings_cache;
        let (mut settings, cached) = match cache.get(&session.key) {
            Ok(settings) => (settings, true),
            Err(ticket) => (self.load(id, &session.key, ticket).await?, false),
        };
        if let Some(idle) = state.settings.session_idle {
            // A cached last use may be older than another replica's: whether to refuse the
            // session as idle or record its use is decided on the store's.
            if cached && quiet(&session, &settings, SystemTime::now()) >= idle / 2 {
                settings = self.load(id, &session.key, cache.ticket()).await?;
            }
        }
        if settings.revoked {
            return Err(refused(id.cloned(), Refused::Unknown("it was deleted")));
        }
        if let Some(idle) = state.settings.session_idle {
            self.keep_alive(id, &session, &settings, idle).await?;
        }
        Ok((session, settings))
    }

    /// Reads session `key`'s settings from the store, and keeps them in this replica's
    /// cache (unless they changed since `ticket`).
    async fn load(
        &self,
        id: Option<&RequestId>,
        key: &str,
        ticket: Ticket,
    ) -> Result<SessionSettings, LegacyOutcome> {
        let settings = (self.state.settings.store.load(key).await)
            .map_err(|e| unavailable(id.cloned(), &e))?;
        self.state.settings_cache.put(key, &settings, ticket);
        Ok(settings)
    }

    /// The idle limit (sliding expiry): refused (404) when the session was not used for
    /// `idle`; its use recorded in the store when less than half of `idle` is left (so one
    /// write per session per half `idle` at most, whatever the request rate). The last use
    /// is read from the settings every request loads anyway (from the store, when it is
    /// that old): no extra read.
    async fn keep_alive(
        &self,
        id: Option<&RequestId>,
        session: &Session,
        settings: &SessionSettings,
        idle: Duration,
    ) -> Result<(), LegacyOutcome> {
        let now = SystemTime::now();
        let quiet = quiet(session, settings, now);
        if quiet >= idle {
            metrics::record_legacy_session_expired("idle");
            tracing::debug!(?quiet, "refused a legacy session id: idle");
            return Err(refused(id.cloned(), Refused::Unknown(session::IDLE)));
        }
        if quiet >= idle / 2 {
            let store = &self.state.settings.store;
            if let Err(e) = store.touch(&session.key, now, session.expires).await {
                return Err(unavailable(id.cloned(), &e));
            }
            self.state.settings_cache.touched(&session.key, now);
            metrics::record_legacy_session_refresh();
        }
        Ok(())
    }

    /// Handles one message of a legacy client (see [legacy clients](crate#legacy-clients)):
    /// `initialize` needs no session; anything else without a session id is refused
    /// ([`Refusal::Missing`]), and with one that names no live session of this caller
    /// ([`Refusal::Unknown`]). `session_id` is its `Mcp-Session-Id`, `extensions` reach
    /// handlers as on the 2026 path.
    pub(crate) async fn handle(
        &self,
        body: &Bytes,
        session_id: Option<&str>,
        extensions: Extensions,
    ) -> LegacyOutcome {
        let msg = match envelope::read(body) {
            Ok(m) => m,
            Err(e) => return malformed(None, e),
        };
        let echo = msg.id.echo();
        if msg.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
            let e = ErrorObject::invalid_request("jsonrpc must be \"2.0\"");
            return malformed(echo, e);
        }
        let principal = extensions.get::<Principal>();
        let Some(method_raw) = msg.method else {
            if msg.result.is_some() || msg.error.is_some() {
                crate::observability::on_answer(&extensions);
                return self.answer(msg.id, body, session_id, principal).await;
            }
            return malformed(echo, ErrorObject::invalid_request("Missing method"));
        };
        let Some(method) = json_str(method_raw) else {
            let e = ErrorObject::invalid_request("method must be a string");
            return malformed(echo, e);
        };
        let id = match msg.id {
            IdField::Valid(id) => id,
            IdField::Absent => {
                // A notification (`initialized`, `cancelled`, …): accepted, on a live session
                // when it names one.
                if session_id.is_some() {
                    if let Err(refusal) = self.session(None, session_id, principal).await {
                        return refusal;
                    }
                }
                return LegacyOutcome::of(Outcome::Accepted);
            }
            IdField::Null => {
                let e = ErrorObject::invalid_request("A request id must not be null");
                return malformed(None, e);
            }
            IdField::Invalid => {
                let e = ErrorObject::invalid_request("A request id must be a string or an integer");
                return malformed(None, e);
            }
        };
        if method == INITIALIZE {
            return self.initialize(id, body, principal);
        }
        // Read before the session is loaded: the trace context goes on the request span
        // before the session store's round trips (its child spans) start it. A refusal of
        // the params still comes after the session's.
        let read = msg.params.read_legacy();
        if let Ok((view, wire)) = &read {
            let (traceparent, tracestate) = (wire.traceparent(), wire.tracestate());
            crate::observability::on_trace(
                &method,
                view.name,
                traceparent,
                tracestate,
                &extensions,
            );
        }
        let (session, settings) = match self.session(Some(&id), session_id, principal).await {
            Ok(s) => s,
            Err(refusal) => return refusal,
        };
        let key = session.key.clone();
        let outcome = match self
            .legacy_method(body, &id, &method, read, session, settings, extensions)
            .await
        {
            Ok(outcome) => outcome,
            Err(e) => return LegacyOutcome::of(Outcome::error(Some(id), e)),
        };
        let running = matches!(outcome, Outcome::Running(_));
        let stamp = self.server.stamp().member().clone();
        LegacyOutcome {
            resumable: running.then(|| self.resumable(key)),
            ..LegacyOutcome::of(super::words::outcome(outcome, stamp))
        }
    }

    /// `initialize`: the negotiated version, the capabilities, `serverInfo`, and a new
    /// session id bound to the caller.
    fn initialize(
        &self,
        id: RequestId,
        body: &[u8],
        principal: Option<&Principal>,
    ) -> LegacyOutcome {
        let p: InitializeParams = match params(body, INITIALIZE) {
            Ok(p) => p,
            Err(e) => return LegacyOutcome::of(Outcome::error(Some(id), e)),
        };
        let version = negotiate_version(&p.protocol_version);
        let token = match session::issue(
            self.server.sealer().keys(),
            version,
            &p.capabilities,
            Some(&p.client_info),
            principal,
        ) {
            Ok(t) => t,
            Err(e) => return LegacyOutcome::of(Outcome::error(Some(id), e.to_wire())),
        };
        let settings = &self.state.settings;
        let mut result = InitializeResult::new(
            version,
            settings.capabilities.clone(),
            self.server.server_info().clone(),
        );
        result.instructions = settings.instructions.clone();
        tracing::debug!(version, client = %p.client_info.name, "legacy session started");
        LegacyOutcome {
            outcome: Outcome::Ready(Reply::result(&id, &result)),
            refusal: None,
            session_id: Some(token),
            resumable: None,
        }
    }

    /// A method of a live session.
    #[allow(clippy::too_many_arguments)]
    async fn legacy_method(
        &self,
        body: &Bytes,
        id: &RequestId,
        method: &str,
        read: Result<(ParamsView<'_>, Box<MetaWire<'_>>), ErrorObject>,
        session: Session,
        settings: SessionSettings,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        let store = &self.state.settings.store;
        let unavailable = |e: crate::Error| {
            Outcome::Ready(Reply::store_unavailable(Some(id.clone()), "session", &e))
        };
        match method {
            PING => return Ok(empty(id)),
            LOGGING_SET_LEVEL => {
                let p: SetLevelParams = params(body, method)?;
                if let Err(e) = store
                    .set_log_level(&session.key, p.level, session.expires)
                    .await
                {
                    return Ok(unavailable(e));
                }
                self.session_changed(&session.key).await;
                return Ok(empty(id));
            }
            RESOURCES_SUBSCRIBE | RESOURCES_UNSUBSCRIBE => {
                if !self.server.advertised().resources {
                    return Err(ErrorObject::method_not_found(
                        method,
                        "the server does not advertise the resources capability",
                    ));
                }
                let p: SubscribeParams = params(body, method)?;
                if !crate::handler::registry::has_scheme(&p.uri) {
                    return Err(ErrorObject::invalid_params(format!(
                        "Invalid resource URI {:?}: it has no scheme",
                        p.uri
                    )));
                }
                if method == RESOURCES_SUBSCRIBE {
                    let added = match store.subscribe(&session.key, &p.uri, session.expires).await {
                        Ok(added) => added,
                        Err(e) => return Ok(unavailable(e)),
                    };
                    if !added {
                        return Err(ErrorObject::invalid_params(format!(
                            "Too many subscriptions: a session may hold {}",
                            MAX_SESSION_SUBSCRIPTIONS
                        )));
                    }
                } else if let Err(e) = store.unsubscribe(&session.key, &p.uri).await {
                    return Ok(unavailable(e));
                }
                self.session_changed(&session.key).await;
                return Ok(empty(id));
            }
            DISCOVER | SUBSCRIPTIONS_LISTEN => {
                return Err(ErrorObject::method_not_found(
                    method,
                    "this method is not part of the session's protocol version",
                ));
            }
            _ => {}
        }
        let (view, wire) = read?;
        let meta = wire.with_identity(session.identity.clone(), settings.log_level);
        let span_meta = crate::observability::SpanMeta {
            version: meta.protocol_version(),
            client: meta.client_name(),
            traceparent: meta.traceparent(),
            tracestate: meta.tracestate(),
            session: Some(&session.key),
        };
        crate::observability::on_request(id, method, span_meta, view.name, view.uri, &extensions);
        let ask = Ask::OverStream(Arc::new(Asker {
            session: session.key,
            identity: session.identity,
            timeout: self.state.settings.input_timeout,
            pending: self.state.pending.clone(),
            notifier: self.server.notifier().clone(),
        }));
        let meta = Meta::Session(Box::new(meta));
        self.server
            .dispatch_method(body, id, method, view, meta, None, extensions, &ask)
    }

    /// Tells every replica that a session's settings changed: its GET stream re-reads them,
    /// and every replica's settings cache drops them. This replica's cache forgets them at
    /// once; on a shared bus it then waits (at most [`ECHO_WAIT`]) for the event to come
    /// back, so that the event reached every replica's bus connection before the change
    /// is answered. Best effort: a replica that misses it serves what it cached for at most
    /// the settings cache's TTL (and a stream still has what it read before).
    /// Boxed: the wait makes its future large, and the paths that announce a change are
    /// rare; inline, it would grow every legacy request's future (moved on its way into
    /// hyper).
    pub(super) fn session_changed<'a>(
        &'a self,
        key: &'a str,
    ) -> futures_util::future::BoxFuture<'a, ()> {
        Box::pin(self.announce_session_change(key))
    }

    async fn announce_session_change(&self, key: &str) {
        self.state.settings_cache.forget(key);
        let notifier = self.server.notifier();
        let mut echo = notifier.is_shared().then(|| notifier.subscribe());
        let event = ChangeEvent::SessionChanged {
            session: key.to_owned(),
        };
        if let Err(e) = notifier.publish(event).await {
            tracing::warn!(error = %e, "could not announce a session change on the bus");
            return;
        }
        let Some(echo) = echo.as_mut() else {
            return;
        };
        let heard = async {
            while let Some(delivery) = echo.recv().await {
                match delivery {
                    Delivery::Resync => return,
                    Delivery::Event(e) => {
                        if matches!(&*e, ChangeEvent::SessionChanged { session } if session == key)
                        {
                            return;
                        }
                    }
                }
            }
        };
        if tokio::time::timeout(ECHO_WAIT, heard).await.is_err() {
            tracing::debug!("a session change did not come back over the bus in time");
        }
    }

    /// A client's answer to a server-to-client request: acknowledged (202) once its session
    /// checks out, and routed to the request (here or over the bus).
    async fn answer(
        &self,
        id: IdField,
        body: &Bytes,
        session_id: Option<&str>,
        principal: Option<&Principal>,
    ) -> LegacyOutcome {
        let (session, _) = match self.session(None, session_id, principal).await {
            Ok(s) => s,
            Err(refusal) => return refusal,
        };
        let IdField::Valid(id) = id else {
            tracing::info!("dropped an answer without a usable id");
            return LegacyOutcome::of(Outcome::Accepted);
        };
        let text = String::from_utf8_lossy(body).into_owned();
        let delivered = self
            .state
            .pending
            .route(&id, &session.key, text, self.server.notifier())
            .await;
        if delivered == Delivered::TooLarge {
            let e = ErrorObject::invalid_request(format!(
                "An answer to a server-to-client request that must travel to another replica \
                 may take at most {MAX_EVENT_BYTES} bytes"
            ));
            return LegacyOutcome::refused(None, e, Refusal::TooLarge);
        }
        LegacyOutcome::of(Outcome::Accepted)
    }
}

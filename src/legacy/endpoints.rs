//! GET and DELETE on the endpoint, for legacy sessions: GET opens the session's stream of
//! change notifications ([`stream`](super::stream), kept for resumption when that is on:
//! [`kept`](super::kept)) or resumes a POST stream ([`resume`](super::resume)); DELETE ends the session on every
//! replica (revoked in the shared store until it would expire, and announced on the bus so
//! its GET stream, wherever it is, ends).

use std::time::SystemTime;

use http::Extensions;

use super::dispatch::{LegacyOutcome, unavailable};
use super::kept::Kept;
use super::resume::{Events, NotResumed};
use super::stream::Stream;
use super::{Legacy, Refusal};
use crate::handler::Principal;
use crate::protocol::ErrorObject;
use crate::server::listen::ListenLimits;
use crate::server::{Listen, Reply};

/// A session's GET stream, opened.
pub(crate) enum Opened {
    /// Not kept: its messages, sent without ids.
    Plain(Listen),
    /// Kept in the event store, resumable ([`kept`](super::kept)).
    Kept(Kept),
}

/// The refusal of a stream the event store could not answer for: 503, `store_unavailable`.
fn events_unavailable(e: &crate::Error) -> LegacyOutcome {
    LegacyOutcome::refused_with(
        Reply::store_unavailable(None, "event", e),
        Refusal::Unavailable,
    )
}

/// The refusal of a stream this replica cannot hold (it holds its maximum): 503 with
/// `Retry-After`.
pub(super) fn busy(limits: &ListenLimits) -> LegacyOutcome {
    let secs = limits.retry_after.as_secs().max(1);
    let mut reply = Reply::error(
        None,
        ErrorObject::internal_error(format!(
            "Server busy: this replica holds its maximum of {} streams; retry in {secs} s",
            limits.max_streams
        )),
    );
    reply.retry_after_secs = Some(u32::try_from(secs).unwrap_or(u32::MAX));
    LegacyOutcome::refused_with(reply, Refusal::Unavailable)
}

impl Legacy {
    /// Opens the GET stream of the legacy session `session_id`: list changes and the
    /// session's subscribed resource updates announced on any replica, until the session is
    /// deleted or expires, or the server drains. `Err` carries the refusal to send.
    pub(crate) async fn open_stream(
        &self,
        session_id: Option<&str>,
        extensions: &Extensions,
    ) -> Result<Listen, LegacyOutcome> {
        let stream = self.stream(session_id, extensions, false).await?;
        Ok(Listen {
            messages: stream.messages(),
        })
    }

    /// The GET stream over HTTP ([`open_stream`](Self::open_stream)), kept for resumption
    /// when that is on ([`kept`](super::kept)). With `last_event_id` (of a GET stream), it
    /// replaces one the client lost: it opens with a resync, and when kept it continues the
    /// lost one. `Err` carries the refusal to send.
    pub(crate) async fn open_get(
        &self,
        session_id: Option<&str>,
        extensions: &Extensions,
        last_event_id: Option<&str>,
    ) -> Result<Opened, LegacyOutcome> {
        let stream = self
            .stream(session_id, extensions, last_event_id.is_some())
            .await?;
        let key = stream.session.key.clone();
        let messages = stream.messages();
        if !self.state.settings.resumable_get {
            return Ok(Opened::Plain(Listen { messages }));
        }
        match self.keep(key, messages, last_event_id).await {
            Ok(kept) => Ok(Opened::Kept(kept)),
            Err(e) => Err(events_unavailable(&e)),
        }
    }

    /// The session's GET stream, opening with a resync when `resync`.
    async fn stream(
        &self,
        session_id: Option<&str>,
        extensions: &Extensions,
        resync: bool,
    ) -> Result<Stream, LegacyOutcome> {
        let principal = extensions.get::<Principal>();
        let (session, settings) = self.session(None, session_id, principal).await?;
        let listeners = self.server.listeners();
        let limits = listeners.limits();
        let Some(slot) = listeners.acquire() else {
            return Err(busy(limits));
        };
        let now = tokio::time::Instant::now();
        let left = session
            .expires
            .duration_since(SystemTime::now())
            .unwrap_or_default();
        let until_expiry = now + left;
        let deadline = match limits.max_lifetime {
            Some(life) => until_expiry.min(now + life),
            None => until_expiry,
        };
        let stream = Stream {
            session,
            settings,
            store: self.state.settings.store.clone(),
            bus: self.server.notifier().subscribe(),
            lists: self.server.advertised(),
            versions: listeners.versions(),
            shutdown: listeners.shutdown().clone(),
            deadline: Some(deadline),
            resync,
            _slot: slot,
        };
        Ok(stream)
    }

    /// Ends the legacy session `session_id` on every replica (DELETE): later requests with
    /// it are refused everywhere. `Err` carries the refusal to send.
    pub(crate) async fn end_session(
        &self,
        session_id: Option<&str>,
        extensions: &Extensions,
    ) -> Result<(), LegacyOutcome> {
        let principal = extensions.get::<Principal>();
        let (session, _) = self.session(None, session_id, principal).await?;
        if let Err(e) = self
            .state
            .settings
            .store
            .revoke(&session.key, session.expires)
            .await
        {
            tracing::error!("the session store could not record a DELETE");
            return Err(unavailable(None, &e));
        }
        self.session_changed(&session.key).await;
        Ok(())
    }
}

impl Legacy {
    /// GET with `Last-Event-ID`: the stream it names, resumed ([`Legacy::replay`]). `Err`
    /// carries the refusal to send (no live session, the store unavailable, the replica
    /// full).
    pub(crate) async fn resume(
        &self,
        session_id: Option<&str>,
        extensions: &Extensions,
        last_event_id: &str,
    ) -> Result<Events, LegacyOutcome> {
        let principal = extensions.get::<Principal>();
        let (session, _) = self.session(None, session_id, principal).await?;
        self.replay(session.key, last_event_id)
            .await
            .map_err(|why| match why {
                NotResumed::Store(e) => events_unavailable(&e),
                NotResumed::Full => busy(self.server.listeners().limits()),
            })
    }
}

//! GET and DELETE on the endpoint, for legacy sessions: GET opens the session's stream of
//! change notifications ([`stream`](super::stream)); DELETE ends the session on every
//! replica (revoked in the shared store until it would expire, and announced on the bus so
//! its GET stream, wherever it is, ends).

use std::time::SystemTime;

use http::Extensions;

use super::dispatch::LegacyOutcome;
use super::stream::Stream;
use crate::handler::Principal;
use crate::protocol::ErrorObject;
use crate::server::{Listen, Outcome, Reply, Server};

impl Server {
    /// Opens the GET stream of the legacy session `session_id`: list changes and the
    /// session's subscribed resource updates announced on any replica, until the session is
    /// deleted or expires, or the server drains. `Err` carries the refusal to send (400,
    /// 404, 503).
    pub async fn open_legacy_stream(
        &self,
        session_id: Option<&str>,
        extensions: &Extensions,
    ) -> Result<Listen, LegacyOutcome> {
        let principal = extensions.get::<Principal>();
        let (session, settings) = self.session(None, session_id, principal).await?;
        let inner = &self.inner;
        let Some(slot) = inner.listeners.acquire() else {
            let secs = inner.listeners.limits.retry_after.as_secs().max(1);
            let mut reply = Reply::error(
                None,
                ErrorObject::internal_error(format!(
                    "Server busy: this replica holds its maximum of {} streams; retry in {secs} s",
                    inner.listeners.limits.max_streams
                )),
            );
            reply.retry_after_secs = Some(u32::try_from(secs).unwrap_or(u32::MAX));
            return Err(LegacyOutcome::of_reply(reply, 503));
        };
        let now = tokio::time::Instant::now();
        let left = session
            .expires
            .duration_since(SystemTime::now())
            .unwrap_or_default();
        let until_expiry = now + left;
        let deadline = match inner.listeners.limits.max_lifetime {
            Some(life) => until_expiry.min(now + life),
            None => until_expiry,
        };
        let stream = Stream {
            session,
            settings,
            store: inner.legacy.store.clone(),
            bus: inner.notifier.subscribe(),
            lists: inner.catalog.advertised,
            versions: inner.listeners.versions(),
            shutdown: inner.listeners.shutdown.clone(),
            deadline: Some(deadline),
            _slot: slot,
        };
        Ok(Listen {
            messages: stream.messages(),
        })
    }

    /// Ends the legacy session `session_id` on every replica (DELETE): later requests with
    /// it get 404 everywhere. `Err` carries the refusal to send (400, 404, 503).
    pub async fn end_legacy_session(
        &self,
        session_id: Option<&str>,
        extensions: &Extensions,
    ) -> Result<(), LegacyOutcome> {
        let principal = extensions.get::<Principal>();
        let (session, _) = self.session(None, session_id, principal).await?;
        if let Err(e) = self
            .inner
            .legacy
            .store
            .revoke(&session.key, session.expires)
            .await
        {
            tracing::error!(error = %e, "the session store could not record a DELETE");
            let e = ErrorObject::internal_error("Internal error: the session store is unavailable");
            return Err(LegacyOutcome::of_reply(Reply::error(None, e), 503));
        }
        self.session_changed(&session.key).await;
        Ok(())
    }
}

impl LegacyOutcome {
    fn of_reply(reply: Reply, status: u16) -> Self {
        LegacyOutcome {
            outcome: Outcome::Ready(reply),
            status: Some(status),
            session_id: None,
        }
    }
}

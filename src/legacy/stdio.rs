//! A 2025-11-25 client over stdio: the session it opens with `initialize` is this
//! process's, so its later messages carry no session id and go to the legacy path with it.
//!
//! - **Requests** go to [`Legacy::handle`], observed by the core as every request is (span
//!   and metrics, labelled from the body). A handler's `InputRequired` becomes
//!   `elicitation/create`, `sampling/createMessage` or `roots/list` requests written on
//!   stdout among the call's other messages (the legacy path puts them on the call's own
//!   stream, which the session writes out).
//! - **Answers** (JSON-RPC responses on stdin) go to the request waiting in this process
//!   ([`Legacy::answer_locally`]); late, duplicate and unknown ones are logged and dropped.
//!   Nothing is forwarded over the bus: no other process sent this client a request.
//! - **Notifications**: once `initialize` is answered, the session's notification stream
//!   (the one a legacy HTTP client opens with GET) is written to stdout: tools, prompts and
//!   resources `list_changed`, and `notifications/resources/updated` for the URIs the
//!   session subscribed to. It is opened before the `initialize` answer is written, so no
//!   change after it is missed; it is opened again if it ends on its own (its maximum
//!   lifetime), and ends when the session drains or a new `initialize` replaces the session.
//!

use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::Extensions;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Legacy;
use super::classify::{Era, classify};
use crate::protocol::IncomingMessage;
use crate::server::{Labels, Listen, Mirrored, Outcome, ReplyBody};

/// How long a notification stream that ended on its own waits before it is opened again,
/// when it lived less than this (so a stream that cannot stay open is not reopened in a
/// tight loop).
const REOPEN_PAUSE: Duration = Duration::from_secs(1);

/// The legacy session of this process, once a client initialized.
pub(crate) struct LegacySession {
    /// The wing, when the server serves legacy clients.
    wing: Option<Legacy>,
    opened: Mutex<Option<Opened>>,
}

struct Opened {
    /// The session id `initialize` issued.
    id: String,
    /// Ends the session's notification stream (a new `initialize` replaces it).
    notifications: CancellationToken,
}

/// What the legacy path made of a line.
pub(crate) enum Handled {
    /// Not a line of a legacy session: the 2026-07-28 path takes it.
    NotLegacy,
    /// A client's answer to a server-to-client request: delivered or dropped, no reply.
    Answer,
    /// What to send, as for any request; after it, the notifications of a session that
    /// `initialize` just opened.
    Outcome(Outcome, Option<Notifications>),
}

/// A new session's notification stream, opened and waiting to be written out.
pub(crate) struct Notifications {
    wing: Legacy,
    session: String,
    first: Option<Listen>,
    stop: CancellationToken,
}

/// Whether a line is a JSON-RPC response (no method; a result or an error).
pub(crate) fn is_response(line: &[u8]) -> bool {
    serde_json::from_slice::<IncomingMessage<'_>>(line)
        .is_ok_and(|m| m.method.is_none() && (m.result.is_some() || m.error.is_some()))
}

impl LegacySession {
    /// The session of a process serving `server` (none open yet).
    pub(crate) fn new(server: &crate::server::Server) -> Self {
        LegacySession {
            wing: Legacy::of(server),
            opened: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Opened>> {
        self.opened.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands `line` to the legacy path if it belongs there: an `initialize` (when the server
    /// serves legacy clients), or anything once a session is open and the line does not
    /// describe itself as 2026-07-28. `draining` ends a new session's notifications.
    pub(crate) async fn handle(&self, line: &Bytes, draining: &CancellationToken) -> Handled {
        let Some(wing) = &self.wing else {
            return Handled::NotLegacy;
        };
        let session = self.lock().as_ref().map(|o| o.id.clone());
        if classify(&Mirrored::Absent, session.is_some(), line) != Era::Legacy {
            return Handled::NotLegacy;
        }
        if let Some(id) = session.as_deref().filter(|_| is_response(line)) {
            wing.answer_locally(line, id).await;
            return Handled::Answer;
        }
        let exchange = wing.handle(line, session.as_deref(), Extensions::new());
        let out = wing.server().observe(Labels::Body(line), exchange).await;
        let Some(id) = out.session_id else {
            return Handled::Outcome(out.outcome, None);
        };
        let first = match wing.open_stream(Some(&id), &Extensions::new()).await {
            Ok(listen) => Some(listen),
            Err(_) => {
                tracing::warn!("the new session's notifications could not be opened");
                None
            }
        };
        let stop = draining.child_token();
        let replaced = self.lock().replace(Opened {
            id: id.clone(),
            notifications: stop.clone(),
        });
        if let Some(old) = replaced {
            tracing::info!("a new initialize replaced this process's legacy session");
            old.notifications.cancel();
        }
        let notifications = first.map(|first| Notifications {
            wing: wing.clone(),
            session: id,
            first: Some(first),
            stop,
        });
        Handled::Outcome(out.outcome, notifications)
    }
}

impl Notifications {
    /// Writes the session's notifications to `out` until the session drains, is replaced,
    /// or `out` is gone; a stream that ends on its own is opened again while the session
    /// opens.
    pub(crate) async fn forward(mut self, out: mpsc::Sender<ReplyBody>) {
        loop {
            let listen = match self.first.take() {
                Some(l) => l,
                None => match self
                    .wing
                    .open_stream(Some(&self.session), &Extensions::new())
                    .await
                {
                    Ok(l) => l,
                    Err(_) => {
                        tracing::info!("the session's notifications ended: it no longer opens");
                        return;
                    }
                },
            };
            let opened = tokio::time::Instant::now();
            let mut messages = listen.messages;
            loop {
                tokio::select! {
                    biased;
                    () = self.stop.cancelled() => return,
                    message = messages.next() => match message {
                        Some(m) => {
                            if out.send(m.into()).await.is_err() {
                                return;
                            }
                        }
                        None => break,
                    },
                }
            }
            drop(messages);
            tracing::debug!("the session's notification stream ended; opening it again");
            if opened.elapsed() < REOPEN_PAUSE {
                tokio::select! {
                    () = self.stop.cancelled() => return,
                    () = tokio::time::sleep(REOPEN_PAUSE) => {}
                }
            }
        }
    }
}

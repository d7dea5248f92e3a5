//! What dispatch hands back to a transport: an [`Outcome`] (accepted, a ready [`Reply`], a
//! [`Running`] handler, or a [`Listen`] stream).

use std::fmt;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::listen::Listen;
use super::reply::Reply;
use crate::protocol::{ErrorObject, RequestId};

/// A handler at work: its final reply, and the notifications it sends before it.
pub struct Running {
    /// Resolves to the final response. Dropping it cancels the handler.
    pub reply: BoxFuture<'static, Reply>,
    /// Encoded notifications (progress, log messages) for the request's own stream. Closed
    /// once the handler and its context are gone. `None` when the request cannot have any:
    /// its `_meta` asked neither for progress (`progressToken`) nor for log messages
    /// (`logLevel`).
    pub events: Option<mpsc::Receiver<Bytes>>,
}

impl fmt::Debug for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running").finish_non_exhaustive()
    }
}

/// The outcome of handing one message to the server.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// A notification was accepted; nothing is sent back (HTTP: 202, empty body).
    Accepted,
    /// The response is ready.
    Ready(Reply),
    /// A handler runs; the transport drives it and relays its notifications.
    Running(Running),
    /// A `subscriptions/listen` stream (HTTP: a long-lived SSE response).
    Listen(Listen),
}

impl Outcome {
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Outcome::Ready(Reply::error(id, error))
    }
}

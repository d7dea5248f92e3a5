//! What a handler knows about the request it serves.

use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http::Extensions;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::context_meta::ContextMeta;
use super::input::Input;
use super::state::States;
use crate::notify::Notifier;
use crate::protocol::{
    ClientCapabilities, Implementation, InputRequest, LOG_MESSAGE_METHOD, LogMessageParams,
    LoggingLevel, Notification, PROGRESS_METHOD, ProgressParams, RequestId, RequestMeta,
};

/// The message a handler queues on its stream to have it closed before its response
/// ([`RequestContext::close_stream`]; never sent: every transport drops it). Defined here,
/// beside the handler's side, so the legacy transport that acts on it depends on the
/// handler and not the other way round.
#[cfg_attr(
    not(any(feature = "reference-server", feature = "fuzzing")),
    allow(dead_code)
)]
pub(crate) const CLOSE_STREAM: Bytes = Bytes::new();

/// The request a handler serves: its id, the client's self-description, a way to report
/// progress and log messages on the request's own stream, cancellation, and the transport's
/// request extensions (where authentication puts the principal).
///
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    parts: ContextParts,
    last_progress: std::sync::Mutex<Option<f64>>,
    /// The cancellation token, made on first use (most handlers never ask for it) unless
    /// the caller gave one ([`ContextParts::cancellation`]).
    cancellation: OnceLock<CancellationToken>,
    /// Set by [`RequestContext::abandon`]: a token made afterwards starts cancelled.
    abandoned: AtomicBool,
}

/// Everything dispatch knows about a request when it hands it to a handler.
#[derive(Debug)]
pub(crate) struct ContextParts {
    pub(crate) id: RequestId,
    pub(crate) method: &'static str,
    pub(crate) meta: ContextMeta,
    pub(crate) extensions: Extensions,
    /// The token to cancel the handler with (a task's); `None`: one is made when a handler
    /// asks, cancelled by [`RequestContext::abandon`].
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) events: Option<mpsc::Sender<Bytes>>,
    pub(crate) input: Input,
    pub(crate) notifier: Notifier,
    pub(crate) states: Arc<States>,
}

impl RequestContext {
    pub(crate) fn new(parts: ContextParts) -> Self {
        RequestContext::with_progress(parts, None)
    }

    fn with_progress(mut parts: ContextParts, last_progress: Option<f64>) -> Self {
        // The token lives in `Inner::cancellation` (made on first use when there is none).
        let cancellation = parts.cancellation.take();
        RequestContext {
            inner: Arc::new(Inner {
                parts,
                last_progress: std::sync::Mutex::new(last_progress),
                cancellation: cancellation.map_or_else(OnceLock::new, OnceLock::from),
                abandoned: AtomicBool::new(false),
            }),
        }
    }

    /// The request was abandoned (its reply dropped, or produced): cancels the token, now if
    /// a handler made it, else as soon as one is made.
    pub(crate) fn abandon(&self) {
        self.inner.abandoned.store(true, Ordering::SeqCst);
        // Pairs with the fence in `cancellation`: of a token being made while the request
        // is abandoned, either this sees the token or that sees the flag.
        fence(Ordering::SeqCst);
        if let Some(token) = self.inner.cancellation.get() {
            token.cancel();
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.parts.id
    }

    /// The method being served, e.g. `tools/call`.
    pub fn method(&self) -> &'static str {
        self.inner.parts.method
    }

    /// The protocol version the request declared.
    pub fn protocol_version(&self) -> &str {
        self.inner.parts.meta.protocol_version()
    }

    /// The capabilities the client declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        self.inner.parts.meta.client_capabilities()
    }

    /// The client's self-reported implementation, if sent. For display and logs only.
    ///
    /// Copied out of the request body on the first call of this or [`meta`](Self::meta).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.meta().client_info.as_ref()
    }

    /// The whole validated `_meta` of the request.
    ///
    /// Built on the first call: until a handler asks, the strings of a 2026-07-28 request's
    /// `_meta` stay in its body ([`protocol_version`](Self::protocol_version) and
    /// [`client_capabilities`](Self::client_capabilities) read what they need without it;
    /// [`client_info`](Self::client_info) builds it). A context whose `_meta` was not built
    /// yet keeps the request's body alive with it.
    pub fn meta(&self) -> &RequestMeta {
        self.inner.parts.meta.get()
    }

    /// The application state of type `S`, for a [`State<S>`](super::State) parameter.
    ///
    /// # Panics
    ///
    /// When no state of type `S` is registered; `ServerBuilder::build` refuses every handler
    /// that takes a state nobody registered, so a built server never gets here.
    pub(crate) fn registered_state<S: Clone + 'static>(&self) -> S {
        match self.inner.parts.states.get::<S>() {
            Some(s) => s.clone(),
            None => panic!(
                "no state of type {} registered (ServerBuilder::build checks this)",
                std::any::type_name::<S>()
            ),
        }
    }

    /// The transport's request extensions (e.g. the authenticated principal).
    pub fn extensions(&self) -> &Extensions {
        &self.inner.parts.extensions
    }

    /// What the client sent back on a multi-round-trip retry: `inputResponses` and the
    /// handler's verified state. Empty on a first attempt (and for methods that cannot ask
    /// for input).
    pub fn input(&self) -> &Input {
        &self.inner.parts.input
    }

    /// Whether the client declared, on this request, the capability `request` needs
    /// (elicitation modes included). The server refuses to send one it did not declare.
    pub fn can_ask(&self, request: &InputRequest) -> bool {
        request.supported_by(self.inner.parts.meta.client_capabilities())
    }

    /// Announces changes (list changed, resource updated) to listening clients on every
    /// replica.
    pub fn notifier(&self) -> &Notifier {
        &self.inner.parts.notifier
    }

    /// The authenticated caller, when an authentication layer put one into the request's
    /// extensions.
    pub fn principal(&self) -> Option<&super::Principal> {
        self.inner.parts.extensions.get::<super::Principal>()
    }

    /// Cancelled when the client goes away (on HTTP: closes the connection) or the request
    /// is otherwise abandoned. Spawned work should watch it.
    pub fn cancellation(&self) -> &CancellationToken {
        let inner = &*self.inner;
        let token = inner.cancellation.get_or_init(CancellationToken::new);
        // Made after (or while) the request was abandoned: it starts cancelled (see the
        // fence in `abandon`: one of the two cancels it).
        fence(Ordering::SeqCst);
        if inner.abandoned.load(Ordering::SeqCst) {
            token.cancel();
        }
        token
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        match self.inner.cancellation.get() {
            Some(token) => token.is_cancelled(),
            None => self.inner.abandoned.load(Ordering::SeqCst),
        }
    }

    /// Whether the client asked for progress notifications (`_meta.progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.inner.parts.meta.progress_token().is_some() && self.inner.parts.events.is_some()
    }

    /// Reports progress on the request's own stream.
    ///
    /// Sent only when the request carried a `progressToken`; `progress` must increase, and a
    /// value that does not is dropped. Waits while the client reads slowly (bounded buffer).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let Some(token) = self.inner.parts.meta.progress_token().cloned() else {
            return;
        };
        {
            let mut last = self
                .inner
                .last_progress
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|l| progress <= l) || !progress.is_finite() {
                tracing::debug!(progress, "dropping non-increasing progress value");
                return;
            }
            *last = Some(progress);
        }
        let params = ProgressParams::new(token, progress, total, message);
        self.emit(&Notification::new(PROGRESS_METHOD, params)).await;
    }

    /// Sends a log message on the request's own stream, if the request asked for log messages
    /// (`_meta["io.modelcontextprotocol/logLevel"]`) at or below `level`.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        match self.inner.parts.meta.log_level() {
            Some(min) if level >= min => {}
            _ => return,
        }
        let params = LogMessageParams::new(level, logger.map(str::to_owned), data);
        self.emit(&Notification::new(LOG_MESSAGE_METHOD, params))
            .await;
    }

    /// The same request with the client's answers to a round of input requests: what a
    /// legacy client's `tools/call` re-runs its handler with (the answers came on the
    /// request's own stream, not in a retry).
    pub(crate) fn with_input(&self, input: Input) -> RequestContext {
        let p = &self.inner.parts;
        let last = *self
            .inner
            .last_progress
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // The same token: cancelling this request cancels the re-run.
        let parts = ContextParts {
            id: p.id.clone(),
            method: p.method,
            meta: p.meta.clone(),
            extensions: p.extensions.clone(),
            cancellation: Some(self.cancellation().clone()),
            events: p.events.clone(),
            input,
            notifier: p.notifier.clone(),
            states: p.states.clone(),
        };
        RequestContext::with_progress(parts, last)
    }

    /// Queues an encoded message (a server-to-client request) on the request's own stream;
    /// `false` when the request has no stream (the client cannot take one, or left).
    pub(crate) async fn send_message(&self, message: Bytes) -> bool {
        match &self.inner.parts.events {
            Some(tx) => tx.send(message).await.is_ok(),
            None => false,
        }
    }

    /// Asks the transport to end the request's stream now, before the response (SSE polling
    /// of the 2025-11-25 wire): the legacy HTTP side ends the response and keeps the handler
    /// running, its later messages and response kept for the client's `Last-Event-ID`; other
    /// transports drop the request. `false` when the request has no stream.
    // Only the reference fixtures (`test_reconnection`) close their stream so far.
    #[cfg_attr(
        not(any(feature = "reference-server", feature = "fuzzing")),
        allow(dead_code)
    )]
    pub(crate) async fn close_stream(&self) -> bool {
        self.send_message(CLOSE_STREAM).await
    }

    async fn emit<T: Serialize>(&self, message: &T) {
        let Some(tx) = &self.inner.parts.events else {
            return;
        };
        match serde_json::to_vec(message) {
            Ok(bytes) => {
                // A closed receiver means the response is complete or the client left.
                let _ = tx.send(Bytes::from(bytes)).await;
            }
            Err(e) => tracing::warn!(error = %e, "could not encode a notification"),
        }
    }
}

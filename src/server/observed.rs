//! Every request is observed here, whatever its era and transport (HTTP, stdio, an
//! in-process client): one `mcp.request` span and one request in the metrics, with its
//! outcome and duration. [`Server::handle`](super::Server::handle) observes the 2026-07-28 requests it
//! dispatches; a wing's exchanges (the 2025-11-25 era) go through
//! [`Server::observe`](super::Server::observe).
//!
//! The span is entered while the ladder runs (dispatch fills in its fields) and a running
//! handler's reply is polled inside it. The metrics are labelled from the mirrored
//! `Mcp-Method` and `Mcp-Name` headers when the transport has them (dispatch refuses a
//! request whose headers differ from its body), else from the body; the outcome is recorded
//! when the final reply is produced, or as `cancelled` when the reply is dropped first. What
//! a transport refuses before it calls `Server::handle` (HTTP's 403/405/406/413/415) it
//! records with `Server::record_rejection`.

use bytes::Bytes;

use super::envelope;
use super::mirror::MirroredHeaders;
use super::outcome::{Outcome, Running};
use super::reply::Reply;
use crate::observability::metrics::RequestOutcome;
use crate::observability::{RequestObserver, RequestProbe};
use crate::protocol::strict::json_str;

/// What an exchange ended with, recorded on its probe: now for a final answer, when its
/// reply is produced for a running one (`cancelled` when that is dropped first). The core's
/// [`Outcome`] implements it; a wing whose transport answers with more (HTTP statuses) has a
/// type of its own.
pub(crate) trait Observed: Sized {
    /// Records `self` on `probe` (or hands the probe to the running reply).
    fn observed(self, probe: RequestProbe) -> Self;
}

impl Observed for Outcome {
    fn observed(self, mut probe: RequestProbe) -> Self {
        match self {
            Outcome::Accepted => probe.finish(RequestOutcome::Accepted),
            Outcome::Ready(ref reply) => probe.finish(outcome_of(reply)),
            Outcome::Running(Running { reply, events }) => {
                return Outcome::Running(Running {
                    reply: Box::pin(probe.track(reply, |r: &Reply| r.error_code)),
                    events,
                });
            }
            Outcome::Listen(_) => probe.finish(RequestOutcome::Ok),
        }
        self
    }
}

/// Where a request's metrics labels come from.
#[derive(Clone, Copy)]
pub(crate) enum Labels<'a> {
    /// The transport's mirrored `Mcp-Method` and `Mcp-Name` headers.
    Headers(&'a MirroredHeaders<'a>),
    /// The body (a transport without headers): its method and name, also recorded on the
    /// span.
    Body(&'a Bytes),
}

/// The outcome label of a final reply.
fn outcome_of(reply: &Reply) -> RequestOutcome {
    reply
        .error_code
        .map_or(RequestOutcome::Ok, RequestOutcome::Error)
}

/// Starts observing a request: its span and metrics series, labelled from `labels`.
pub(super) fn start(observer: &RequestObserver, labels: Labels<'_>) -> RequestProbe {
    match labels {
        Labels::Headers(m) => observer.start_labelled(m.method.value(), m.name.value()),
        Labels::Body(body) => {
            let mut probe = observer.start_labelled(None, None);
            if let Ok(msg) = envelope::read(body) {
                if let Some(method) = msg.method.and_then(json_str) {
                    probe.label(observer, &method, msg.params.name());
                    let span = probe.span();
                    if !span.is_disabled() {
                        span.record("mcp.method.name", method.as_ref());
                        if let Some(id) = msg.id.echo() {
                            span.record("jsonrpc.request.id", tracing::field::display(&id));
                        }
                    }
                }
            }
            probe
        }
    }
}

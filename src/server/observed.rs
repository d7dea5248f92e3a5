//! Every request is observed here, whatever its era and transport (HTTP, stdio, an
//! in-process client): one `mcp.request` span and one request in the metrics, with its
//! outcome and duration. [`Server::handle`] observes the 2026-07-28 requests it dispatches;
//! a wing's exchanges (the 2025-11-25 era) go through [`Server::observe`].
//!
//! The span is entered while the ladder runs (dispatch fills in its fields) and a running
//! handler's reply is polled inside it. The metrics are labelled from the mirrored
//! `Mcp-Method` and `Mcp-Name` headers when the transport has them (dispatch refuses a
//! request whose headers differ from its body), else from the body; the outcome is recorded
//! when the final reply is produced, or as `cancelled` when the reply is dropped first. What
//! a transport refuses before it calls [`Server::handle`] (HTTP's 403/405/406/413/415) it
//! records itself with [`Server::record_rejection`].

use std::future::Future;

use bytes::Bytes;
use http::Extensions;

use super::mirror::MirroredHeaders;
use super::outcome::{Outcome, Running};
use super::reply::Reply;
use super::{Server, envelope};
use crate::observability::RequestProbe;
use crate::observability::metrics::RequestOutcome;
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

impl Server {
    /// Handles one incoming message: the whole validation ladder, then the method, observed
    /// (request metrics and the `mcp.request` span, as for every transport).
    ///
    /// `mirror` carries the values of the transport's mirrored headers (`None` for a
    /// transport without headers, e.g. stdio); `extensions` reach handlers through
    /// [`RequestContext::extensions`](crate::RequestContext::extensions).
    pub fn handle(
        &self,
        body: &Bytes,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
    ) -> Outcome {
        let mut probe = self.inner.observer.start_labelled(
            mirror.and_then(|m| m.method.value()),
            mirror.and_then(|m| m.name.value()),
        );
        let outcome = {
            let span = probe.span().clone();
            let _entered = span.enter();
            self.dispatch(body, mirror, extensions, &mut probe)
        };
        outcome.observed(probe)
    }

    /// Observes one exchange that a wing answers (the 2025-11-25 era, over any transport) as
    /// [`Server::handle`] observes a request: the `mcp.request` span (entered while
    /// `exchange` runs; the method and id recorded for a body-labelled request, the rest by
    /// dispatch as on the 2026 path), the request metrics labelled from `labels`, and the
    /// outcome as [`Observed`] records it.
    pub(crate) async fn observe<O: Observed>(
        &self,
        labels: Labels<'_>,
        exchange: impl Future<Output = O>,
    ) -> O {
        let probe = match labels {
            Labels::Headers(m) => self.start_probe(m),
            Labels::Body(body) => {
                let mut probe = self.inner.observer.start_labelled(None, None);
                if let Ok(msg) = envelope::read(body) {
                    if let Some(method) = msg.method.and_then(json_str) {
                        probe.label(&self.inner.observer, &method, msg.params.name());
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
        };
        let span = probe.span().clone();
        let out = tracing::Instrument::instrument(exchange, span).await;
        out.observed(probe)
    }

    /// Starts observing a request labelled from its mirrored headers.
    fn start_probe(&self, mirror: &MirroredHeaders) -> RequestProbe {
        self.inner
            .observer
            .start_labelled(mirror.method.value(), mirror.name.value())
    }

    /// Records a request a transport refused before handing it to [`Server::handle`]
    /// (`status`: the HTTP status it answered), labelled from its mirrored headers.
    pub(crate) fn record_rejection(&self, mirror: &MirroredHeaders, status: u16) {
        self.start_probe(mirror)
            .finish(RequestOutcome::Rejected(status));
    }
}

//! [`Server::handle`]: every message a transport hands over is observed here, whatever the
//! transport (HTTP, stdio, an in-process client): one `mcp.request` span and one request in
//! the metrics, with its outcome and duration.
//!
//! The span is entered while the ladder runs (dispatch fills in its fields) and a running
//! handler's reply is polled inside it. The metrics are labelled from the mirrored
//! `Mcp-Method` and `Mcp-Name` headers when the transport has them (dispatch refuses a
//! request whose headers differ from its body), else from the body; the outcome is recorded
//! when the final reply is produced, or as `cancelled` when the reply is dropped first. What
//! a transport refuses before it calls [`Server::handle`] (HTTP's 403/405/406/413/415) it
//! records itself with [`Server::record_rejection`].

use bytes::Bytes;
use http::Extensions;

use super::mirror::MirroredHeaders;
use super::outcome::{Outcome, Running};
use super::reply::Reply;
use super::{LegacyOutcome, Server, envelope};
use crate::observability::RequestProbe;
use crate::observability::metrics::RequestOutcome;
use crate::protocol::strict::json_str;

/// Records `outcome` on `probe`: now for a final one, when its reply is produced for a
/// running one (`cancelled` when that is dropped first).
fn observe(mut probe: RequestProbe, outcome: Outcome) -> Outcome {
    match outcome {
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
    outcome
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
        observe(probe, outcome)
    }

    /// [`Server::handle_legacy`] for a transport without headers (stdio), observed as
    /// [`Server::handle`] observes a request: the `mcp.request` span (the method and id
    /// recorded for every method, the rest by dispatch as on the 2026 path), the request
    /// metrics labelled from the body, and the outcome recorded when the final reply is
    /// produced (`cancelled` when it is dropped first).
    pub(crate) async fn handle_legacy_observed(
        &self,
        body: &Bytes,
        session_id: Option<&str>,
        extensions: Extensions,
    ) -> LegacyOutcome {
        let mut probe = self.inner.observer.start_labelled(None, None);
        let span = probe.span().clone();
        if let Ok(msg) = envelope::read(body) {
            if let Some(method) = msg.method.and_then(json_str) {
                probe.label(&self.inner.observer, &method, msg.params.name());
                if !span.is_disabled() {
                    span.record("mcp.method.name", method.as_ref());
                    if let Some(id) = msg.id.echo() {
                        span.record("jsonrpc.request.id", tracing::field::display(&id));
                    }
                }
            }
        }
        let mut out =
            tracing::Instrument::instrument(self.handle_legacy(body, session_id, extensions), span)
                .await;
        out.outcome = observe(
            probe,
            std::mem::replace(&mut out.outcome, Outcome::Accepted),
        );
        out
    }

    /// Starts observing a request outside [`Server::handle`] (the HTTP transport's own legacy
    /// exchanges and refusals), labelled from its mirrored headers.
    pub(crate) fn start_probe(&self, mirror: &MirroredHeaders) -> RequestProbe {
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

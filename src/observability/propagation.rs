//! Trace context across replicas: what a replica puts in a bus event so that the replica
//! acting on it continues the same trace (a `tasks/cancel` on one replica stopping the
//! handler on another). Both ends are no-ops unless traces are exported (feature `otel`
//! with an [`OtlpTraces`](super::OtlpTraces) layer installed).

use tracing::Span;

/// The W3C `traceparent` of the current span as it is exported, for a bus event; `None`
/// when traces are not exported or no span is current.
pub(crate) fn current_traceparent() -> Option<String> {
    #[cfg(feature = "otel")]
    if super::otel::exporting() {
        return super::otel::current_traceparent();
    }
    None
}

/// Makes `span` (not started yet) continue the trace of `traceparent`, a value
/// [`current_traceparent`] gave on another replica.
pub(crate) fn continue_trace(span: &Span, traceparent: Option<&str>) {
    #[cfg(feature = "otel")]
    if super::otel::exporting() && !span.is_disabled() {
        if let Some(tp) = traceparent.and_then(super::TraceParent::parse) {
            super::otel::set_remote_parent(span, &tp, None);
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, traceparent);
}

/// Whether a child span made now would be recorded under a parent: `DEBUG` spans may be
/// recorded (the level is checked first: with `DEBUG` off everywhere, the usual case, that
/// is all it costs) and a span is current. The spans of bus and store round trips are made
/// only then: outside any span (a background sweep, the rate limit before the request span,
/// the announcement at start-up) each would be a trace of its own that tells nothing.
pub(crate) fn inside_a_span() -> bool {
    tracing::level_enabled!(tracing::Level::DEBUG) && !Span::current().is_none()
}

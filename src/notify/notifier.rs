//! The handle application code announces changes through.

use std::fmt;
use std::sync::Arc;

use super::event::ChangeEvent;
use crate::Error;
use crate::backends::bus::{BusReceiver, MemoryBus, NotifyBus};

/// Announces changes to every listening client, on every replica. Cheap to clone; use it
/// from a handler ([`RequestContext::notifier`](crate::RequestContext::notifier)), a
/// background task or an admin endpoint.
///
/// ```
/// # async fn demo() -> Result<(), stateless_mcp::Error> {
/// use stateless_mcp::notify::Notifier;
///
/// let notifier = Notifier::memory();
/// let server = stateless_mcp::Server::builder().notifier(notifier.clone()).build()?;
/// // Later, anywhere:
/// notifier.resource_updated("file:///config.json").await?;
/// # drop(server);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Notifier {
    bus: Arc<dyn NotifyBus>,
}

impl fmt::Debug for Notifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notifier").finish_non_exhaustive()
    }
}

impl Default for Notifier {
    fn default() -> Self {
        Self::memory()
    }
}

impl Notifier {
    /// A notifier over `bus`.
    pub fn new(bus: Arc<dyn NotifyBus>) -> Self {
        Notifier { bus }
    }

    /// A notifier over a new in-process [`MemoryBus`].
    pub fn memory() -> Self {
        Self::new(Arc::new(MemoryBus::default()))
    }

    /// Publishes any event.
    ///
    /// When traces are exported (feature `otel`) and the event has room for a trace context
    /// that is still empty, it carries the caller's: the replicas that deliver it do so in
    /// the same trace. On a bus shared with other processes the publication, made inside a
    /// span, is a span of its own (`mcp.bus.publish`, a producer span) and the event carries
    /// that span's context.
    pub async fn publish(&self, mut event: ChangeEvent) -> Result<(), Error> {
        let kind = event.kind();
        crate::observability::metrics::record_notification_published(kind);
        let span = self.publication_span(kind);
        if let Some(slot) = event.traceparent_mut().filter(|slot| slot.is_none()) {
            *slot = span.in_scope(crate::observability::current_traceparent);
        }
        let published = if span.is_disabled() {
            self.bus.publish(event).await
        } else {
            tracing::Instrument::instrument(self.bus.publish(event), span).await
        };
        if published.is_err() {
            crate::observability::metrics::record_bus_publish_error(kind);
        }
        published
    }

    /// The span an event of `kind` is published in: on a bus shared with other processes,
    /// inside a span, `mcp.bus.publish` (a producer span); else none, since in-process the
    /// publication is a function call. Also what a task store that publishes in its own
    /// write ([`TaskStore::announces`](crate::tasks::TaskStore::announces)) writes in.
    pub(crate) fn publication_span(&self, kind: &'static str) -> tracing::Span {
        if self.bus.is_shared() && crate::observability::inside_a_span() {
            tracing::debug_span!(
                "mcp.bus.publish",
                otel.kind = "producer",
                messaging.operation.type = "send",
                mcp.bus.event = kind,
            )
        } else {
            tracing::Span::none()
        }
    }

    /// The tool list changed.
    pub async fn tools_list_changed(&self) -> Result<(), Error> {
        self.publish(ChangeEvent::tools_list_changed()).await
    }

    /// The prompt list changed.
    pub async fn prompts_list_changed(&self) -> Result<(), Error> {
        self.publish(ChangeEvent::prompts_list_changed()).await
    }

    /// The resource list changed.
    pub async fn resources_list_changed(&self) -> Result<(), Error> {
        self.publish(ChangeEvent::resources_list_changed()).await
    }

    /// The content of `uri` changed.
    pub async fn resource_updated(&self, uri: impl Into<String>) -> Result<(), Error> {
        self.publish(ChangeEvent::resource_updated(uri)).await
    }

    /// Where its bus's events travel ([`NotifyBus::route`]).
    pub(crate) fn route(&self) -> Option<&str> {
        self.bus.route()
    }

    /// Whether its bus joins replicas in other processes ([`NotifyBus::is_shared`]).
    pub(crate) fn is_shared(&self) -> bool {
        self.bus.is_shared()
    }

    /// A subscription to the bus (what listen streams read).
    pub fn subscribe(&self) -> BusReceiver {
        self.bus.subscribe()
    }
}

//! What the broker-backed buses share: their options, and the connection state that drives
//! readiness, metrics, logs and the resync owed to subscribers after a reconnect.

#[cfg(any(feature = "redis", feature = "nats"))]
use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(any(feature = "redis", feature = "nats"))]
use super::contract::Fanout;
use super::memory::DEFAULT_CAPACITY;
#[cfg(any(feature = "redis", feature = "nats"))]
use crate::notify::ChangeEvent;
use crate::observability::Condition;
#[cfg(any(feature = "redis", feature = "nats"))]
use crate::observability::metrics;

/// The largest event a broker-backed bus accepts from its broker; bigger messages are
/// dropped with a warning (events are small: a type and at most one URI).
pub const MAX_EVENT_BYTES: usize = 64 * 1024;

/// Settings shared by the broker-backed buses ([`RedisBus`](super::RedisBus),
/// [`NatsBus`](super::NatsBus)).
///
/// ```
/// use stateless_mcp::backends::BusOptions;
/// use stateless_mcp::observability::Readiness;
///
/// let readiness = Readiness::new();
/// let options = BusOptions::default()
///     .prefix("docs-mcp")
///     .capacity(4096)
///     .readiness(readiness.condition("bus"));
/// assert_eq!(options.channel(), "docs-mcp.events");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BusOptions {
    /// Events go to the channel (Redis) or subject (NATS) `PREFIX.events`, so several
    /// deployments can share one broker. Default: `stateless-mcp`.
    pub prefix: String,
    /// Size of the local ring ([`Fanout`]): how many events a listen stream may fall behind
    /// before it is resynced.
    pub capacity: usize,
    /// A readiness condition the bus keeps "not ready" while it is not connected.
    pub readiness: Option<Condition>,
}

impl Default for BusOptions {
    fn default() -> Self {
        BusOptions {
            prefix: "stateless-mcp".to_owned(),
            capacity: DEFAULT_CAPACITY,
            readiness: None,
        }
    }
}

impl BusOptions {
    /// Options with this channel/subject prefix.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Options with this local ring size.
    #[must_use]
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// Options that report the connection state through `condition`.
    #[must_use]
    pub fn readiness(mut self, condition: Condition) -> Self {
        self.readiness = Some(condition);
        self
    }

    /// The channel or subject events travel on.
    pub fn channel(&self) -> String {
        format!("{}.events", self.prefix)
    }
}

#[cfg(any(feature = "redis", feature = "nats"))]
/// Decodes an event received from the broker; anything else is dropped with a warning.
pub(super) fn decode(backend: &'static str, payload: &[u8]) -> Option<ChangeEvent> {
    if payload.len() > MAX_EVENT_BYTES {
        tracing::warn!(
            backend,
            bytes = payload.len(),
            "dropped an oversized message from the bus"
        );
        return None;
    }
    match serde_json::from_slice(payload) {
        Ok(event) => Some(event),
        Err(e) => {
            tracing::warn!(backend, error = %e, "dropped a message from the bus that is not a change event");
            None
        }
    }
}

#[cfg(any(feature = "redis", feature = "nats"))]
/// The connection state of one broker-backed bus.
pub(super) struct Link {
    backend: &'static str,
    target: String,
    fanout: Fanout,
    condition: Option<Condition>,
    connected: AtomicBool,
    ever_connected: AtomicBool,
}

#[cfg(any(feature = "redis", feature = "nats"))]
impl Link {
    /// A link that is not connected yet.
    pub(super) fn new(
        backend: &'static str,
        url: &str,
        fanout: Fanout,
        options: &BusOptions,
    ) -> Self {
        let target = crate::backends::redact::redacted_url(url);
        let link = Link {
            backend,
            condition: options.readiness.clone(),
            fanout,
            connected: AtomicBool::new(false),
            ever_connected: AtomicBool::new(false),
            target,
        };
        if let Some(c) = &link.condition {
            c.not_ready(format!("connecting to {} at {}", link.backend, link.target));
        }
        metrics::record_bus_connected(backend, false);
        link
    }

    /// The local ring events are delivered through.
    pub(super) fn fanout(&self) -> &Fanout {
        &self.fanout
    }

    /// Whether the bus is connected now.
    pub(super) fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    /// The bus is connected and subscribed. After a reconnect, every subscriber is resynced:
    /// events published while it was down are lost.
    pub(super) fn up(&self) {
        if self.connected.swap(true, Ordering::AcqRel) {
            return;
        }
        metrics::record_bus_connected(self.backend, true);
        if let Some(c) = &self.condition {
            c.ready();
        }
        if self.ever_connected.swap(true, Ordering::AcqRel) {
            metrics::record_bus_reconnect(self.backend);
            tracing::info!(backend = self.backend, target = %self.target, "bus reconnected; resyncing listen streams");
            self.fanout.resync();
        } else {
            tracing::info!(backend = self.backend, target = %self.target, "bus connected");
        }
    }

    /// The bus lost (or could not make) its connection.
    pub(super) fn down(&self, reason: &dyn std::fmt::Display) {
        if let Some(c) = &self.condition {
            c.not_ready(format!(
                "{} bus at {} disconnected: {reason}",
                self.backend, self.target
            ));
        }
        if self.connected.swap(false, Ordering::AcqRel) {
            metrics::record_bus_connected(self.backend, false);
            tracing::warn!(backend = self.backend, target = %self.target, error = %reason, "bus disconnected; reconnecting");
        } else {
            tracing::debug!(backend = self.backend, target = %self.target, error = %reason, "bus still not connected");
        }
    }
}

#[cfg(all(test, any(feature = "redis", feature = "nats")))]
mod tests {
    use super::*;

    #[test]
    fn only_change_events_are_delivered() {
        assert_eq!(
            decode("test", br#"{"type":"tools_list_changed"}"#),
            Some(ChangeEvent::tools_list_changed())
        );
        assert_eq!(decode("test", b"hello"), None);
        assert_eq!(decode("test", br#"{"type":"unknown"}"#), None);
        let big = vec![b' '; MAX_EVENT_BYTES + 1];
        assert_eq!(decode("test", &big), None);
    }

    #[tokio::test]
    async fn a_reconnect_resyncs_subscribers_and_flips_readiness() {
        let readiness = crate::observability::Readiness::new();
        let fanout = Fanout::new(8);
        let mut rx = fanout.subscribe();
        let options = BusOptions::default().readiness(readiness.condition("bus"));
        let link = Link::new("test", "redis://:pw@h:1", fanout, &options);
        let reasons = readiness.check().unwrap_err();
        assert!(
            reasons[0].starts_with("bus: connecting to test at redis://h:1"),
            "{reasons:?}"
        );
        link.up();
        assert!(readiness.is_ready());
        link.down(&"boom");
        assert!(!readiness.is_ready());
        assert!(!link.is_connected());
        link.up();
        assert!(readiness.is_ready());
        // Only the reconnect resyncs, not the first connection.
        assert_eq!(rx.recv().await, Some(super::super::Delivery::Resync));
        let more = tokio::time::timeout(std::time::Duration::from_millis(20), rx.recv()).await;
        assert!(more.is_err(), "{more:?}");
    }
}

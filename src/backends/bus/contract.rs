//! The bus trait and the local fan-out every backend delivers through.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio::sync::broadcast;

use crate::Error;
use crate::notify::ChangeEvent;

/// What a subscriber receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// An event.
    Event(Arc<ChangeEvent>),
    /// Events may have been missed (the subscriber lagged, or the bus reconnected): assume
    /// everything changed.
    Resync,
}

/// Carries [`ChangeEvent`]s from publishers to the listen streams of every replica.
///
/// # Contract
///
/// Every [`NotifyBus`] implementation keeps these promises, and listen streams rely on no
/// more:
///
/// - **Best effort.** An event published while a subscriber exists reaches it unless the
///   subscriber lags or the bus loses its connection; in both cases the subscriber is told
///   ([`Delivery::Resync`]) instead of being left in silence.
/// - **No ordering across publishers.** Events from one publisher on one replica arrive in
///   order; events from different publishers or replicas may interleave in any order.
/// - **Bounded memory.** Each replica keeps one ring of at most `capacity` events shared by
///   all its subscribers. A subscriber that falls more than `capacity` events behind skips to
///   the newest events and receives one [`Delivery::Resync`]; a listen stream answers it by
///   sending every list-changed notification it subscribed to (and `resources/updated` for
///   each subscribed URI), so the client re-reads what it cares about. A stalled subscriber
///   therefore never grows memory.
/// - **Events, not state.** Events are small, serializable ([`ChangeEvent`](crate::notify::ChangeEvent)), and carry
///   nothing about any client.
///
/// - **Reconnects resync.** A broker-backed bus that loses its connection reports it (its
///   readiness condition, `mcp_bus_connected`) and, once reconnected, sends every local
///   subscriber one [`Delivery::Resync`], since events published meanwhile are lost.
/// - **Clean shutdown.** Dropping the last handle of a bus stops its background work and
///   closes its connections; its subscribers then receive `None`.
///
///
/// A cross-replica bus publishes to a broker and feeds what it receives into a [`Fanout`],
/// which gives every bus the same local semantics. Events travel as the JSON of
/// [`ChangeEvent`], so programs other than the server can publish them too.
pub trait NotifyBus: Send + Sync + 'static {
    /// Publishes `event` to every subscriber on every replica. Best effort: an error means
    /// the event was not handed to the transport (e.g. the broker is unreachable).
    fn publish(&self, event: ChangeEvent) -> BoxFuture<'_, Result<(), Error>>;

    /// A subscription to the events published from now on.
    fn subscribe(&self) -> BusReceiver;

    /// Whether this bus joins replicas in other processes (a broker's bus does; the default).
    /// A server on such a bus is one replica of several, so it must seal with the key ring
    /// they all share: [`ServerBuilder::build`](crate::ServerBuilder::build) refuses to
    /// generate a key of its own then. An in-process bus answers `false`.
    fn is_shared(&self) -> bool {
        true
    }

    /// Where this bus's events travel, for a store that publishes them within its own
    /// writes (`RedisTaskStore::announcing_on`): the broker, the user and the channel, as in
    /// `redis 127.0.0.1:6379 user=default channel=stateless-mcp.events`. A server takes such
    /// a store's publications for its bus's only when the two routes are equal. `None` (the
    /// default): only the bus itself publishes.
    fn route(&self) -> Option<&str> {
        None
    }
}

/// One subscriber's end of a bus. Dropping it unsubscribes.
pub struct BusReceiver {
    rx: broadcast::Receiver<Delivery>,
}

impl fmt::Debug for BusReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BusReceiver")
            .field("pending", &self.rx.len())
            .finish()
    }
}

impl BusReceiver {
    /// The next delivery; `None` once the bus is gone. A subscriber that fell behind by more
    /// than the ring's capacity gets one [`Delivery::Resync`] and continues with the newest
    /// events.
    pub async fn recv(&mut self) -> Option<Delivery> {
        match self.rx.recv().await {
            Ok(d) => Some(d),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "listen subscriber lagged; resyncing");
                crate::observability::metrics::record_bus_lagged(missed);
                Some(Delivery::Resync)
            }
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// The next delivery if one is waiting, without waiting: `Ok(None)` when none is,
    /// `Err(BusClosed)` once the bus is gone. Lagging answers [`Delivery::Resync`], as
    /// [`recv`](Self::recv) does.
    pub(crate) fn try_recv(&mut self) -> Result<Option<Delivery>, BusClosed> {
        match self.rx.try_recv() {
            Ok(d) => Ok(Some(d)),
            Err(broadcast::error::TryRecvError::Empty) => Ok(None),
            Err(broadcast::error::TryRecvError::Lagged(missed)) => {
                crate::observability::metrics::record_bus_lagged(missed);
                Ok(Some(Delivery::Resync))
            }
            Err(broadcast::error::TryRecvError::Closed) => Err(BusClosed),
        }
    }
}

/// The bus a [`BusReceiver`] listened to is gone (its last handle was dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BusClosed;

/// A bounded ring that fans deliveries out to a replica's subscribers: the local half of
/// every bus. A cross-replica backend feeds what it receives from its broker into one.
#[derive(Clone)]
pub struct Fanout {
    tx: broadcast::Sender<Delivery>,
}

impl fmt::Debug for Fanout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fanout")
            .field("subscribers", &self.tx.receiver_count())
            .finish()
    }
}

impl Fanout {
    /// A ring of `capacity` deliveries (at least 1).
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        Fanout { tx }
    }

    /// Delivers `event` to every current subscriber. Never blocks.
    pub fn deliver(&self, event: ChangeEvent) {
        let _ = self.tx.send(Delivery::Event(Arc::new(event)));
    }

    /// Tells every current subscriber that events may have been missed.
    pub fn resync(&self) {
        let _ = self.tx.send(Delivery::Resync);
    }

    /// A new subscriber.
    pub fn subscribe(&self) -> BusReceiver {
        BusReceiver {
            rx: self.tx.subscribe(),
        }
    }

    /// How many subscribers there are now.
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stalled_subscriber_gets_a_resync_not_unbounded_memory() {
        let fan = Fanout::new(4);
        let mut slow = fan.subscribe();
        for _ in 0..100 {
            fan.deliver(ChangeEvent::tools_list_changed());
        }
        assert_eq!(slow.recv().await, Some(Delivery::Resync));
        // Then the newest events (the ring holds at most 4).
        let mut rest = 0;
        while let Ok(Some(_)) =
            tokio::time::timeout(std::time::Duration::from_millis(10), slow.recv()).await
        {
            rest += 1;
        }
        assert_eq!(rest, 4);
    }
}

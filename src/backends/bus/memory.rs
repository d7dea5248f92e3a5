//! The in-process bus: one replica, no broker.

use futures_util::future::BoxFuture;

use super::contract::{BusReceiver, Fanout, NotifyBus};
use crate::Error;
use crate::notify::ChangeEvent;

/// The default bus: events reach the listen streams of this process only. Enough for one
/// replica; several replicas need a cross-replica bus.
///
/// ```
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::notify::Notifier;
/// use stateless_mcp::backends::MemoryBus;
///
/// // What `Notifier::memory()` does, with room for 4096 undelivered events per stream.
/// let notifier = Notifier::new(Arc::new(MemoryBus::new(4096)));
/// let server = Server::builder().notifier(notifier).build().unwrap();
/// # drop(server);
/// ```
#[derive(Debug, Clone)]
pub struct MemoryBus {
    fanout: Fanout,
}

/// How many events a subscriber may lag behind before it is resynced, by default.
pub(crate) const DEFAULT_CAPACITY: usize = 256;

impl Default for MemoryBus {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

impl MemoryBus {
    /// A bus whose subscribers may lag `capacity` events before they are resynced.
    pub fn new(capacity: usize) -> Self {
        MemoryBus {
            fanout: Fanout::new(capacity),
        }
    }
}

impl NotifyBus for MemoryBus {
    fn publish(&self, event: ChangeEvent) -> BoxFuture<'_, Result<(), Error>> {
        self.fanout.deliver(event);
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self) -> BusReceiver {
        self.fanout.subscribe()
    }

    /// In this process only.
    fn is_shared(&self) -> bool {
        false
    }
}

//! The NATS bus: change events over NATS core pub/sub (feature `nats`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use tokio::sync::OnceCell;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::contract::{BusReceiver, Fanout, NotifyBus};
use super::link::{BusOptions, Link, decode};
use crate::Error;
use crate::backends::redact::redacted_url;
use crate::notify::ChangeEvent;

const BACKEND: &str = "nats";
const PING_EVERY: Duration = Duration::from_secs(5);
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// A [`NotifyBus`] over NATS core pub/sub: every replica configured with the same NATS and
/// prefix receives every event. Cheap to clone; the connection closes when the last clone
/// is dropped.
///
/// # Wire format
///
/// Each event is one message on the subject `PREFIX.events` (prefix `stateless-mcp` by
/// default, [`BusOptions::prefix`]) whose payload is the event's JSON ([`ChangeEvent`]), the
/// same format as the Redis bus: `nats pub stateless-mcp.events '{"type":"tools_list_changed"}'`.
/// Messages that are not a known event are dropped with a warning.
///
/// # Connection
///
/// The client connects in the background and reconnects on its own (no attempt limit),
/// re-subscribing as it does; it pings every 5 s so a dead server is noticed. While it is
/// disconnected the readiness condition (if any) is not ready, `mcp_bus_connected{backend="nats"}`
/// is 0 and publishing fails with [`ErrorKind::Unavailable`](crate::ErrorKind); once it is
/// back every local subscriber gets a [`Delivery::Resync`](super::Delivery::Resync).
///
/// ```no_run
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::notify::Notifier;
/// use stateless_mcp::backends::{BusOptions, NatsBus};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Inside a Tokio runtime; every replica uses the same NATS server and prefix.
/// let bus = NatsBus::connect("nats://nats:4222", BusOptions::default())?;
/// let server = Server::builder().notifier(Notifier::new(Arc::new(bus))).build()?;
/// # drop(server);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct NatsBus {
    inner: Arc<Inner>,
}

struct Inner {
    link: Arc<Link>,
    client: Arc<OnceCell<async_nats::Client>>,
    subject: String,
    target: String,
    _stop: DropGuard,
}

impl fmt::Debug for NatsBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NatsBus")
            .field("target", &self.inner.target)
            .field("subject", &self.inner.subject)
            .field("connected", &self.inner.link.is_connected())
            .finish()
    }
}

impl NatsBus {
    /// Starts a bus on the NATS server at `url` (`nats://[USER:PASSWORD@]HOST:PORT`). Returns
    /// at once; the client connects in the background and keeps reconnecting.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime to run the client on.
    pub fn connect(url: &str, options: BusOptions) -> Result<Self, Error> {
        let target = redacted_url(url);
        let addr: async_nats::ServerAddr = url
            .parse()
            .map_err(|e| Error::invalid_definition(format!("invalid NATS URL {target}: {e}")))?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::invalid_definition("NatsBus::connect must be called within a Tokio runtime")
        })?;
        let link = Arc::new(Link::new(
            BACKEND,
            url,
            Fanout::new(options.capacity),
            &options,
        ));
        let subject = options.channel();
        let client = Arc::new(OnceCell::new());
        let stop = CancellationToken::new();
        runtime.spawn(run(
            addr,
            subject.clone(),
            link.clone(),
            client.clone(),
            stop.clone(),
        ));
        Ok(NatsBus {
            inner: Arc::new(Inner {
                link,
                client,
                subject,
                target,
                _stop: stop.drop_guard(),
            }),
        })
    }

    /// Whether the client is connected now.
    pub fn is_connected(&self) -> bool {
        self.inner.link.is_connected()
    }
}

impl NotifyBus for NatsBus {
    fn publish(&self, event: ChangeEvent) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            let unavailable = |why: String| {
                Error::unavailable(format!("publishing to NATS at {}", self.inner.target), why)
            };
            let client = match self.inner.client.get() {
                Some(c) if self.inner.link.is_connected() => c,
                _ => return Err(unavailable("not connected".to_owned())),
            };
            let payload = serde_json::to_vec(&event).map_err(Error::internal_from)?;
            let publish = client.publish(self.inner.subject.clone(), payload.into());
            match tokio::time::timeout(IO_TIMEOUT, publish).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(unavailable(e.to_string())),
                Err(_) => Err(unavailable("timed out".to_owned())),
            }
        })
    }

    fn subscribe(&self) -> BusReceiver {
        self.inner.link.fanout().subscribe()
    }
}

/// Connects, subscribes and feeds what arrives into the link's ring until `stop`.
async fn run(
    addr: async_nats::ServerAddr,
    subject: String,
    link: Arc<Link>,
    slot: Arc<OnceCell<async_nats::Client>>,
    stop: CancellationToken,
) {
    let events = link.clone();
    let options = async_nats::ConnectOptions::new()
        .name("stateless-mcp")
        .retry_on_initial_connect()
        .max_reconnects(None)
        .ping_interval(PING_EVERY)
        .connection_timeout(IO_TIMEOUT)
        .event_callback(move |event| {
            let link = events.clone();
            async move {
                match event {
                    async_nats::Event::Connected => link.up(),
                    async_nats::Event::Disconnected | async_nats::Event::Closed => {
                        link.down(&event);
                    }
                    other => tracing::debug!(backend = BACKEND, event = %other, "bus event"),
                }
            }
        });
    let client = tokio::select! {
        () = stop.cancelled() => return,
        c = options.connect(addr) => match c {
            Ok(c) => c,
            Err(e) => {
                link.down(&e);
                tracing::error!(backend = BACKEND, error = %e, "cannot start the NATS client");
                return;
            }
        },
    };
    let subscribe = tokio::select! {
        () = stop.cancelled() => return,
        s = client.subscribe(subject) => s,
    };
    let mut messages = match subscribe {
        Ok(s) => s,
        Err(e) => {
            link.down(&e);
            tracing::error!(backend = BACKEND, error = %e, "cannot subscribe on NATS");
            return;
        }
    };
    let _ = slot.set(client);
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            message = messages.next() => match message {
                Some(m) => {
                    if let Some(event) = decode(BACKEND, &m.payload) {
                        link.fanout().deliver(event);
                    }
                }
                None => {
                    link.down(&"subscription closed");
                    break;
                }
            },
        }
    }
}

//! The Redis bus: change events over Redis pub/sub (feature `redis`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use redis::aio::ConnectionManager;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::contract::{BusReceiver, Fanout, NotifyBus};
use super::link::{BusOptions, Link, decode};
use crate::Error;
use crate::backends::redis_conn::{self as redis_support, IO_TIMEOUT, query_reconnecting};
use crate::notify::ChangeEvent;

const BACKEND: &str = "redis";
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
const PING_EVERY: Duration = Duration::from_secs(5);

/// A [`NotifyBus`] over Redis pub/sub: every replica configured with the same Redis and
/// prefix receives every event. Cheap to clone; the background subscriber stops when the
/// last clone is dropped.
///
/// # Wire format
///
/// Each event is one `PUBLISH` to the channel `PREFIX.events` (prefix `stateless-mcp` by
/// default, [`BusOptions::prefix`]) whose message is the event's JSON ([`ChangeEvent`]):
///
/// ```text
/// PUBLISH stateless-mcp.events '{"type":"tools_list_changed"}'
/// PUBLISH stateless-mcp.events '{"type":"resource_updated","uri":"file:///docs/a.md"}'
/// ```
///
/// Any program can publish such a message (a CMS after an edit, a deploy job), e.g.
/// `redis-cli PUBLISH stateless-mcp.events '{"type":"prompts_list_changed"}'`. Messages that
/// are not a known event, or larger than [`MAX_EVENT_BYTES`](super::MAX_EVENT_BYTES), are
/// dropped with a warning.
///
/// # Connection
///
/// One subscriber connection per replica, re-established with exponential backoff (0.1 s to
/// 5 s) when it fails; it is pinged every 5 s so a dead peer is noticed even when no event
/// flows. While it is down the readiness condition (if any) is not ready and
/// `mcp_bus_connected{backend="redis"}` is 0; once it is back, every local subscriber gets a
/// [`Delivery::Resync`](super::Delivery::Resync), since events may have been missed.
/// Publishing uses a separate, lazily connected multiplexed connection; a publish while Redis
/// is unreachable fails within seconds (two attempts, 4 s each at most) with
/// [`ErrorKind::Unavailable`](crate::ErrorKind).
#[derive(Clone)]
pub struct RedisBus {
    inner: Arc<Inner>,
}

struct Inner {
    link: Arc<Link>,
    publisher: ConnectionManager,
    channel: String,
    target: String,
    /// Where its events travel ([`NotifyBus::route`]).
    route: String,
    _stop: DropGuard,
}

impl fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBus")
            .field("target", &self.inner.target)
            .field("channel", &self.inner.channel)
            .field("connected", &self.inner.link.is_connected())
            .finish()
    }
}

impl RedisBus {
    /// Starts a bus on the Redis at `url` (`redis://[:PASSWORD@]HOST:PORT[/DB]`, or
    /// `rediss://` for TLS when the `redis` crate is built with TLS). Returns at once; the
    /// connection is made in the background and retried until it succeeds.
    ///
    /// # Errors
    /// An invalid URL, or no Tokio runtime to run the subscriber on.
    pub fn connect(url: &str, options: BusOptions) -> Result<Self, Error> {
        let lazy = redis_support::connect_lazy(url, "RedisBus::connect")?;
        let channel = options.channel();
        let route = format!("{} channel={channel}", lazy.pubsub_scope());
        let redis_support::Lazy {
            client,
            manager: publisher,
            target,
            runtime,
        } = lazy;
        let link = Arc::new(Link::new(
            BACKEND,
            url,
            Fanout::new(options.capacity),
            &options,
        ));
        let stop = CancellationToken::new();
        runtime.spawn(subscribe_loop(
            client,
            channel.clone(),
            link.clone(),
            stop.clone(),
        ));
        Ok(RedisBus {
            inner: Arc::new(Inner {
                link,
                publisher,
                channel,
                target,
                route,
                _stop: stop.drop_guard(),
            }),
        })
    }

    /// Whether the subscriber connection is up now.
    pub fn is_connected(&self) -> bool {
        self.inner.link.is_connected()
    }

    /// The channel its events travel on.
    pub(crate) fn channel(&self) -> &str {
        &self.inner.channel
    }
}

impl NotifyBus for RedisBus {
    fn publish(&self, event: ChangeEvent) -> BoxFuture<'_, Result<(), Error>> {
        let mut conn = self.inner.publisher.clone();
        Box::pin(async move {
            let payload = serde_json::to_vec(&event).map_err(Error::internal_from)?;
            let mut cmd = redis::cmd("PUBLISH");
            cmd.arg(&self.inner.channel).arg(payload);
            let context = format!("publishing to Redis at {}", self.inner.target);
            // At worst an event arrives twice, which is harmless.
            query_reconnecting::<i64>(&mut conn, &cmd, "bus", context).await?;
            Ok(())
        })
    }

    fn subscribe(&self) -> BusReceiver {
        self.inner.link.fanout().subscribe()
    }

    fn route(&self) -> Option<&str> {
        Some(&self.inner.route)
    }
}

/// Keeps one subscriber connection up until `stop`, feeding what it receives into the link's
/// ring.
async fn subscribe_loop(
    client: redis::Client,
    channel: String,
    link: Arc<Link>,
    stop: CancellationToken,
) {
    let mut backoff = MIN_BACKOFF;
    loop {
        let ended = tokio::select! {
            () = stop.cancelled() => return,
            ended = session(&client, &channel, &link) => ended,
        };
        if link.is_connected() {
            backoff = MIN_BACKOFF;
        }
        link.down(&ended);
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One connection's life: connect, subscribe, deliver until it fails. Returns why it ended.
async fn session(client: &redis::Client, channel: &str, link: &Link) -> String {
    let connect = async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        Ok::<_, redis::RedisError>(pubsub)
    };
    let pubsub = match tokio::time::timeout(IO_TIMEOUT, connect).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => return e.to_string(),
        Err(_) => return "connection timed out".to_owned(),
    };
    let (mut sink, mut messages) = pubsub.split();
    link.up();
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ping.tick().await;
    loop {
        tokio::select! {
            message = messages.next() => match message {
                Some(m) => {
                    if let Some(event) = decode(BACKEND, m.get_payload_bytes()) {
                        link.fanout().deliver(event);
                    }
                }
                None => return "connection closed".to_owned(),
            },
            _ = ping.tick() => {
                match tokio::time::timeout(IO_TIMEOUT, sink.ping::<redis::Value>()).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => return e.to_string(),
                    Err(_) => return "no answer to PING".to_owned(),
                }
            }
        }
    }
}

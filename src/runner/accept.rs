//! The accept loop: serves an axum app on a listener (HTTP/1.1 and h2c) under the
//! [`ConnectionLimits`], in place of `axum::serve`, which offers no header limit, header
//! timeout, idle timeout or connection bound.
//!
//! Each connection is watched ([`super::watch`]): an HTTP/1.1 request head that does not
//! arrive within the header timeout closes it, as does the idle timeout (gracefully) when
//! nothing is in flight; its head is bounded by hyper's read buffer (431 beyond it). At
//! `stop` the loop accepts no more, asks every connection to finish gracefully (idle ones
//! close at once, busy ones after their response) and returns once all are gone.
//!
//! Each connection's loop keeps one timer and one stop waiter for its whole life: the timer
//! moves only when a deadline comes closer, and a request head wakes the loop only when the
//! timer would see it too late, so a keep-alive request costs the loop no registration.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::Poll;

use axum::serve::Listener;
use http::{Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::task::TaskTracker;

use super::limits::ConnectionLimits;
use super::signal::Signal;
use super::stamp::Stamp;
use super::watch::{Counted, Expired, Track, Watched};
use crate::observability::metrics::{self, Refusal};

/// The body a connection beyond [`ConnectionLimits::max_connections`] gets before it is
/// closed (a JSON-RPC error without id, as every HTTP-level refusal).
const TOO_MANY_CONNECTIONS: &str = r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Server busy: too many open connections on this replica; retry later"}}"#;

fn too_many_connections() -> Vec<u8> {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{TOO_MANY_CONNECTIONS}",
        TOO_MANY_CONNECTIONS.len()
    )
    .into_bytes()
}

/// Refusals being written at once; beyond this, extra connections are dropped unanswered.
const MAX_REFUSALS_IN_PROGRESS: usize = 256;

/// How the accept loop serves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) limits: ConnectionLimits,
    /// Whether requests get the peer address (`ConnectInfo<SocketAddr>`).
    pub(crate) peer_address: bool,
}

/// What the accept loop serves: an axum app (a `Router`, possibly mapped), cloned per
/// connection.
pub(crate) trait App<B>:
    tower::Service<Request<Incoming>, Response = Response<B>, Error = Infallible, Future: Send>
    + Clone
    + Send
    + 'static
{
}

impl<S, B> App<B> for S where
    S: tower::Service<Request<Incoming>, Response = Response<B>, Error = Infallible, Future: Send>
        + Clone
        + Send
        + 'static
{
}

/// What the served app's response bodies must be.
pub(crate) trait AppBody:
    Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

impl<B> AppBody for B where
    B: Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

/// What every connection of one accept loop shares.
struct Serving {
    builder: Builder<TokioExecutor>,
    stamp: Arc<Stamp>,
}

fn builder(limits: &ConnectionLimits) -> Builder<TokioExecutor> {
    let mut b = Builder::new(TokioExecutor::new());
    // The read buffer bounds the request head: hyper answers 431 when it fills first.
    b.http1().max_buf_size(limits.max_header_bytes);
    b.http2()
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX));
    b
}

/// Serves `app` on `listener` until `stop`, then waits for every connection to finish.
pub(crate) async fn serve<L, S, B>(
    mut listener: L,
    app: S,
    stamp: Arc<Stamp>,
    settings: Settings,
    stop: Signal,
) -> std::io::Result<()>
where
    L: Listener<Io = TcpStream, Addr = SocketAddr>,
    S: App<B>,
    B: AppBody,
{
    let serving = Arc::new(Serving {
        builder: builder(&settings.limits),
        stamp,
    });
    let slots = Arc::new(Semaphore::new(settings.limits.max_connections));
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS_IN_PROGRESS));
    let tasks = TaskTracker::new();
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            metrics::record_refusal(Refusal::TooManyConnections);
            if let Ok(permit) = refusals.clone().try_acquire_owned() {
                tasks.spawn(refuse(tcp, permit));
            }
            continue;
        };
        tasks.spawn(connection(
            tcp,
            peer,
            app.clone(),
            serving.clone(),
            settings,
            stop.clone(),
            slot,
        ));
    }
    tasks.close();
    tasks.wait().await;
    Ok(())
}

/// Tells a connection beyond the limit to come back later, and closes it.
async fn refuse(mut tcp: TcpStream, _permit: OwnedSemaphorePermit) {
    let write = async {
        tcp.write_all(&too_many_connections()).await?;
        tcp.shutdown().await
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), write).await;
}

/// What the connection's loop woke up for.
enum Woke<E> {
    /// The connection ended (hyper's result).
    Ended(Result<(), E>),
    /// The server is stopping: finish gracefully.
    Stop,
    /// The timer fired: look at the deadlines again.
    Timer,
    /// A request head started that the timer would check too late.
    HeadStarted,
}

/// Whether a connection error is hyper's "request head too large" (answered 431 already).
fn head_too_large(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(e);
    while let Some(s) = source {
        if s.downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_parse_too_large)
        {
            return true;
        }
        source = s.source();
    }
    false
}

async fn connection<S, B>(
    tcp: TcpStream,
    peer: SocketAddr,
    app: S,
    serving: Arc<Serving>,
    settings: Settings,
    stop: Signal,
    _slot: OwnedSemaphorePermit,
) where
    S: App<B>,
    B: AppBody,
{
    let _open = metrics::OpenConnection::new();
    let track = Arc::new(Track::new());
    let io = TokioIo::new(Watched::new(tcp, track.clone()));
    let peer_address = settings.peer_address.then_some(peer);
    let service = Counted::new(app, track.clone(), serving.stamp.clone(), peer_address);
    let conn = serving
        .builder
        .serve_connection_with_upgrades(io, TowerToHyperService::new(service));
    tokio::pin!(conn);
    let (header, idle) = (settings.limits.header_timeout, settings.limits.idle_timeout);
    let mut closing = false;
    // The stop signal and the timer live as long as the connection: made once, their wakers
    // registered once. Between wake-ups they are only peeked at (cheap) after each poll of
    // the connection, not polled (each poll of a cancellation takes two locks).
    let stopped = stop.cancelled();
    tokio::pin!(stopped);
    let mut stop_registered = false;
    let timer = tokio::time::sleep_until(tokio::time::Instant::now() + idle);
    tokio::pin!(timer);
    // What `timer` is set to (`None`: it fired), and whether it was polled since.
    let mut armed: Option<tokio::time::Instant> = None;
    let mut timer_registered = false;
    loop {
        let next = match track.check(header, idle) {
            Ok(next) => next,
            Err(Expired::Header) => {
                metrics::record_refusal(Refusal::HeaderTimeout);
                tracing::debug!(%peer, "request head not received in time: connection closed");
                return;
            }
            Err(Expired::Idle) if !closing => {
                metrics::record_idle_connection_closed();
                conn.as_mut().graceful_shutdown();
                closing = true;
                continue;
            }
            // Closing already: wait for hyper to finish.
            Err(Expired::Idle) => tokio::time::Instant::now() + idle,
        };
        // A later deadline needs no new timer: the one set wakes the loop early, which then
        // looks again. So the timer moves only when a deadline comes closer (or after it
        // fired), not on every request.
        if armed.is_none_or(|at| next < at) {
            timer.as_mut().reset(next);
            armed = Some(next);
            timer_registered = false;
            track.armed(next, header);
        }
        let woke = std::future::poll_fn(|cx| {
            if let Poll::Ready(result) = conn.as_mut().poll(cx) {
                return Poll::Ready(Woke::Ended(result));
            }
            if track.head_started() {
                return Poll::Ready(Woke::HeadStarted);
            }
            if !closing && (!stop_registered || stop.is_cancelled()) {
                stop_registered = true;
                if stopped.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Woke::Stop);
                }
            }
            if !timer_registered || timer.is_elapsed() {
                timer_registered = true;
                if timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Woke::Timer);
                }
            }
            Poll::Pending
        })
        .await;
        match woke {
            Woke::Ended(result) => {
                if let Err(e) = result {
                    if head_too_large(&*e) {
                        metrics::record_refusal(Refusal::HeaderTooLarge);
                    }
                    tracing::trace!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            Woke::Stop => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            Woke::Timer => armed = None,
            Woke::HeadStarted => {}
        }
    }
}

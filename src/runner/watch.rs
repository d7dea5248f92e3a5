//! What one connection is doing, seen from outside hyper: whether a request head is being
//! awaited (and since when), how many requests are in flight, and since when it has been
//! idle. The accept loop ([`super::accept`]) reads it to close slow and idle connections.
//!
//! Three small pieces feed one [`Track`] per connection: [`Watched`] wraps the socket and
//! notes when bytes of a new request head start arriving; [`Counted`] wraps the service and
//! counts a request from the moment hyper hands it over until its response body is finished
//! or dropped, so a listen stream is in flight for as long as it is open.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use http::{Request, Response};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::transport::http::limits::Guarded;

/// "No time": no head awaited.
const NONE: u64 = u64::MAX;

/// The start of every HTTP/2 connection (prior knowledge, h2c).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0";

/// Why the accept loop should end a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expired {
    /// An HTTP/1.1 request head took longer than the header timeout: closed at once.
    Header,
    /// Nothing in flight for the idle timeout: closed gracefully.
    Idle,
}

/// The shared state of one connection.
#[derive(Debug)]
pub(crate) struct Track {
    start: Instant,
    /// Milliseconds since `start` at which a request head began to be awaited (at the
    /// connection's start, or at the first byte after the previous response), or [`NONE`].
    head_since: AtomicU64,
    /// Milliseconds since `start` at which the last request in flight finished.
    idle_since: AtomicU64,
    active: AtomicUsize,
    /// Whether the first bytes were checked for the HTTP/2 preface.
    sniffed: AtomicBool,
    http2: AtomicBool,
    /// Woken when a head starts being awaited, so the loop's deadline moves earlier.
    head_started: Notify,
}

impl Track {
    pub(crate) fn new() -> Self {
        Track {
            start: Instant::now(),
            head_since: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            sniffed: AtomicBool::new(false),
            http2: AtomicBool::new(false),
            head_started: Notify::new(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// Bytes arrived from the client.
    fn on_read(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if !self.sniffed.swap(true, Ordering::Relaxed) && bytes.starts_with(H2_PREFACE) {
            // HTTP/2 bounds its own frames; only the idle timeout applies.
            self.http2.store(true, Ordering::Relaxed);
            self.head_since.store(NONE, Ordering::Relaxed);
            return;
        }
        if self.http2.load(Ordering::Relaxed) || self.active.load(Ordering::Relaxed) > 0 {
            return;
        }
        if self
            .head_since
            .compare_exchange(NONE, self.now_ms(), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.head_started.notify_one();
        }
    }

    fn request_started(&self) {
        self.active.fetch_add(1, Ordering::Relaxed);
        self.head_since.store(NONE, Ordering::Relaxed);
    }

    fn request_finished(&self) {
        // Set before the count drops, so the loop never sees idle with an old time.
        self.idle_since.store(self.now_ms(), Ordering::Relaxed);
        self.active.fetch_sub(1, Ordering::Relaxed);
    }

    /// Resolves when a head starts being awaited.
    pub(crate) async fn head_started(&self) {
        self.head_started.notified().await;
    }

    /// What has expired now, and otherwise when to look again.
    pub(crate) fn check(&self, header: Duration, idle: Duration) -> Result<Instant, Expired> {
        let now = self.now_ms();
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(NONE / 2);
        let mut next = now.saturating_add(ms(idle));
        let head = self.head_since.load(Ordering::Relaxed);
        if head != NONE && !self.http2.load(Ordering::Relaxed) {
            let due = head.saturating_add(ms(header));
            if now >= due {
                return Err(Expired::Header);
            }
            next = next.min(due);
        }
        if self.active.load(Ordering::Relaxed) == 0 {
            let due = self
                .idle_since
                .load(Ordering::Relaxed)
                .saturating_add(ms(idle));
            if now >= due {
                return Err(Expired::Idle);
            }
            next = next.min(due);
        }
        Ok(self.at(next))
    }
}

/// The socket, noting in its [`Track`] when the bytes of a request head start arriving.
#[derive(Debug)]
pub(crate) struct Watched<I> {
    io: I,
    track: Arc<Track>,
}

impl<I> Watched<I> {
    pub(crate) fn new(io: I, track: Arc<Track>) -> Self {
        Watched { io, track }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Watched<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if polled.is_ready() {
            this.track.on_read(&buf.filled()[before..]);
        }
        polled
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Watched<I> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// One request in flight on its connection, until dropped.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Track>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// The connection's service: counts each request in flight until its response body ends,
/// and gives handlers the peer address (`ConnectInfo<SocketAddr>`) when asked to.
#[derive(Debug, Clone)]
pub(crate) struct Counted<S> {
    inner: S,
    track: Arc<Track>,
    peer: Option<SocketAddr>,
}

impl<S> Counted<S> {
    pub(crate) fn new(inner: S, track: Arc<Track>, peer: Option<SocketAddr>) -> Self {
        Counted { inner, track, peer }
    }
}

impl<S, ReqBody, ResBody> tower::Service<Request<ReqBody>> for Counted<S>
where
    S: tower::Service<Request<ReqBody>, Response = Response<ResBody>, Error = Infallible>,
{
    type Response = Response<Guarded<ResBody, InFlight>>;
    type Error = Infallible;
    type Future = CountedFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<ReqBody>) -> Self::Future {
        self.track.request_started();
        let guard = InFlight(self.track.clone());
        if let Some(peer) = self.peer {
            request.extensions_mut().insert(ConnectInfo(peer));
        }
        CountedFuture {
            inner: self.inner.call(request),
            guard: Some(guard),
        }
    }
}

pin_project_lite::pin_project! {
    /// The response future of [`Counted`]: moves the in-flight guard into the body.
    pub(crate) struct CountedFuture<F> {
        #[pin]
        inner: F,
        guard: Option<InFlight>,
    }
}

impl<F, B> Future for CountedFuture<F>
where
    F: Future<Output = Result<Response<B>, Infallible>>,
{
    type Output = Result<Response<Guarded<B, InFlight>>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(response) = std::task::ready!(this.inner.poll(cx));
        let guard = this.guard.take();
        Poll::Ready(Ok(response.map(|body| Guarded::new(body, guard))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(60);

    #[tokio::test(start_paused = true)]
    async fn a_fresh_connection_must_send_its_head_within_the_header_timeout() {
        let t = Track::new();
        assert!(t.check(HEADER, IDLE).is_ok());
        tokio::time::advance(HEADER).await;
        assert_eq!(t.check(HEADER, IDLE), Err(Expired::Header));
    }

    #[tokio::test(start_paused = true)]
    async fn between_requests_only_the_idle_timeout_runs_until_a_byte_arrives() {
        let t = Arc::new(Track::new());
        t.on_read(b"POST /mcp HTTP/1.1\r\n");
        t.request_started();
        tokio::time::advance(IDLE * 2).await;
        assert!(t.check(HEADER, IDLE).is_ok(), "in flight: never expires");
        drop(InFlight(t.clone()));
        tokio::time::advance(HEADER * 2).await;
        assert!(t.check(HEADER, IDLE).is_ok(), "idle, no head awaited yet");
        t.on_read(b"PO");
        tokio::time::advance(HEADER).await;
        assert_eq!(t.check(HEADER, IDLE), Err(Expired::Header));
        t.request_started();
        drop(InFlight(t.clone()));
        tokio::time::advance(IDLE).await;
        assert_eq!(t.check(HEADER, IDLE), Err(Expired::Idle));
    }

    #[tokio::test(start_paused = true)]
    async fn http2_connections_have_no_header_timeout() {
        let t = Track::new();
        t.on_read(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        tokio::time::advance(HEADER * 2).await;
        t.on_read(b"\0\0\0\x04\0\0\0\0\0");
        assert!(t.check(HEADER, IDLE).is_ok());
        tokio::time::advance(IDLE).await;
        assert_eq!(t.check(HEADER, IDLE), Err(Expired::Idle));
    }
}

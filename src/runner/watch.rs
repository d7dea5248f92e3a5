//! What one connection is doing, seen from outside hyper: whether a request head is being
//! awaited (and since when), how many requests are in flight, and since when it has been
//! idle. The accept loop ([`super::accept`]) reads it to close slow and idle connections.
//!
//! Two small pieces feed one [`Track`] per connection: [`Watched`] wraps the socket and
//! notes when bytes of a new request head start arriving; [`Counted`] wraps the service and
//! counts a request from the moment hyper hands it over until its response body is finished
//! or dropped, so a listen stream is in flight for as long as it is open (it also stamps
//! each response, [`super::stamp`]).

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
use tokio::time::Instant;

use super::stamp::Stamp;
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
    /// A head that starts before this time (ms since `start`) ends its header timeout before
    /// the accept loop's next wake-up: the loop must look again ([`Track::head_started`]).
    /// Heads that start later need no wake-up, which spares the loop one per request.
    wake_before: AtomicU64,
    /// Set when a head started before `wake_before`.
    head_started: AtomicBool,
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
            wake_before: AtomicU64::new(NONE),
            head_started: AtomicBool::new(false),
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
        if self.http2.load(Ordering::Relaxed)
            || self.active.load(Ordering::Relaxed) > 0
            || self.head_since.load(Ordering::Relaxed) != NONE
        {
            return;
        }
        let now = self.now_ms();
        if self
            .head_since
            .compare_exchange(NONE, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
            && now < self.wake_before.load(Ordering::Relaxed)
        {
            self.head_started.store(true, Ordering::Relaxed);
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

    /// The accept loop will next look at this connection at `deadline` (its timer), and
    /// HTTP/1.1 heads have `header` to arrive: a head that starts later than
    /// `deadline - header` is checked in time without waking the loop earlier.
    pub(crate) fn armed(&self, deadline: Instant, header: Duration) {
        let at = u64::try_from(deadline.saturating_duration_since(self.start).as_millis())
            .unwrap_or(NONE - 1);
        let header = u64::try_from(header.as_millis()).unwrap_or(NONE);
        self.wake_before
            .store(at.saturating_sub(header), Ordering::Relaxed);
    }

    /// Whether a head started that the loop's timer would check too late (see
    /// [`Track::armed`]); clears it. Heads start only while the connection is polled (its
    /// socket is read then), so the loop asks after each poll instead of being woken.
    pub(crate) fn head_started(&self) -> bool {
        self.head_started.load(Ordering::Relaxed)
            && self.head_started.swap(false, Ordering::Relaxed)
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
/// gives handlers the peer address (`ConnectInfo<SocketAddr>`) when asked to, and stamps
/// each response ([`Stamp`]).
#[derive(Debug, Clone)]
pub(crate) struct Counted<S> {
    inner: S,
    track: Arc<Track>,
    stamp: Arc<Stamp>,
    peer: Option<SocketAddr>,
}

impl<S> Counted<S> {
    pub(crate) fn new(
        inner: S,
        track: Arc<Track>,
        stamp: Arc<Stamp>,
        peer: Option<SocketAddr>,
    ) -> Self {
        Counted {
            inner,
            track,
            stamp,
            peer,
        }
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
            stamp: self.stamp.clone(),
        }
    }
}

pin_project_lite::pin_project! {
    /// The response future of [`Counted`]: stamps the response and moves the in-flight
    /// guard into its body.
    pub(crate) struct CountedFuture<F> {
        #[pin]
        inner: F,
        guard: Option<InFlight>,
        stamp: Arc<Stamp>,
    }
}

impl<F, B> Future for CountedFuture<F>
where
    F: Future<Output = Result<Response<B>, Infallible>>,
{
    type Output = Result<Response<Guarded<B, InFlight>>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(mut response) = std::task::ready!(this.inner.poll(cx));
        this.stamp.apply(&mut response);
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
    async fn a_head_wakes_the_loop_only_when_its_timer_would_check_it_too_late() {
        let t = Arc::new(Track::new());
        t.on_read(b"POST /mcp HTTP/1.1\r\n");
        assert!(
            !t.head_started(),
            "the first head is awaited from the start"
        );
        t.request_started();
        drop(InFlight(t.clone()));
        // The loop's timer is an idle timeout away: a head now times out before it.
        t.armed(Instant::now() + IDLE, HEADER);
        t.on_read(b"PO");
        assert!(t.head_started(), "the loop must look again");
        assert!(!t.head_started(), "and is told once");
        t.on_read(b"ST");
        assert!(!t.head_started(), "the same head");
        t.request_started();
        drop(InFlight(t.clone()));
        // The timer fires before a head starting now times out.
        t.armed(Instant::now() + HEADER / 2, HEADER);
        t.on_read(b"PO");
        assert!(!t.head_started());
        tokio::time::advance(HEADER / 2).await;
        assert!(
            t.check(HEADER, IDLE).is_ok(),
            "the timer's look finds it in time"
        );
        tokio::time::advance(HEADER / 2).await;
        assert_eq!(t.check(HEADER, IDLE), Err(Expired::Header));
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

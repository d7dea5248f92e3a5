//! What happens to each accepted connection: TCP_NODELAY, the listener that closes when the
//! drain says so, the accept loop's limits ([`super::accept`]), and the headers every
//! response gets ([`super::stamp`]: `Connection: close` once the listener is closed, and the
//! runner's own response header).

use std::net::SocketAddr;

use std::sync::Arc;

use axum::serve::{Listener, ListenerExt as _};
use http::{HeaderName, HeaderValue};
use tokio::net::{TcpListener, TcpSocket};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::accept::{self, Settings};
use super::dispatch::Dispatch;
use super::signal::Signal;
use super::stamp::Stamp;
use crate::Error;

/// A listener that stops accepting and closes its socket when `closed` is cancelled (the
/// server keeps serving the connections it has until its own shutdown signal).
pub(crate) struct Closing<L: Listener> {
    inner: Option<L>,
    addr: L::Addr,
    closed: CancellationToken,
}

impl<L: Listener> Closing<L>
where
    L::Addr: Clone,
{
    pub(crate) fn new(inner: L, closed: CancellationToken) -> std::io::Result<Self> {
        let addr = inner.local_addr()?;
        Ok(Closing {
            inner: Some(inner),
            addr,
            closed,
        })
    }
}

impl<L: Listener> Listener for Closing<L>
where
    L::Addr: Clone + Sync,
{
    type Io = L::Io;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let Closing { inner, closed, .. } = self;
        if let Some(listener) = inner.as_mut() {
            tokio::select! {
                accepted = listener.accept() => return accepted,
                () = closed.cancelled() => {}
            }
        }
        // Dropping the socket makes new connections fail at once (refused).
        *inner = None;
        std::future::pending().await
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr.clone())
    }
}

/// The listen backlog asked for: connections the kernel completes before the accept loop
/// takes them. `TcpListener::bind` asks for 128, which a burst of reconnecting listen streams
/// overflows (each dropped SYN costs its client a 1 s retransmission: opening 10,000 HTTP/1.1
/// streams 250 at a time took 12–24 s with hundreds of `ListenOverflows`). The kernel caps
/// it at `net.core.somaxconn` (4096 on current Linux).
const LISTEN_BACKLOG: u32 = 4096;

/// Binds `addr` (address reuse on, as `TcpListener::bind` sets it) with [`LISTEN_BACKLOG`];
/// `what` names the setting in the error.
pub(crate) async fn bind(addr: SocketAddr, what: &str) -> Result<TcpListener, Error> {
    let listen = || {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        #[cfg(not(windows))]
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(LISTEN_BACKLOG)
    };
    listen().map_err(|e| Error::io(format!("cannot listen on {addr} ({what})"), e))
}

/// The address `listener` is bound to.
pub(crate) fn local_addr(listener: &TcpListener) -> Result<SocketAddr, Error> {
    listener
        .local_addr()
        .map_err(|e| Error::io("cannot read the bound address", e))
}

/// A running accept loop.
pub(crate) type ServeTask = JoinHandle<std::io::Result<()>>;

/// Serves `app` on `listener` (HTTP/1.1 and h2c) in a task under the connection limits of
/// `settings`: TCP_NODELAY on every accepted socket, the listener closed when `closed` is
/// cancelled, idle connections closed and the task finished (once in-flight requests are
/// answered) when `stop` is cancelled.
pub(crate) fn spawn(
    listener: TcpListener,
    app: Dispatch,
    header: Option<(HeaderName, HeaderValue)>,
    settings: Settings,
    closed: &Signal,
    stop: Signal,
) -> Result<ServeTask, Error> {
    // Small SSE writes must not wait for delayed ACKs.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    let listener = Closing::new(listener, closed.token().clone())
        .map_err(|e| Error::io("cannot read the bound address", e))?;
    let stamp = Arc::new(Stamp::new(header, closed.clone()));
    Ok(tokio::spawn(accept::serve(
        listener,
        app.into_service(),
        stamp,
        settings,
        stop,
    )))
}

//! The stdio transport: newline-delimited JSON-RPC over a pipe, for servers that a desktop
//! host or an IDE starts as a subprocess.
//!
//! The client writes one JSON-RPC message per line to the server's stdin; the server writes
//! one per line to its stdout, and nothing else: logs go to stderr. Messages are handed to
//! [`Server::handle`] unchanged, without mirrored headers (there are none to check), so the
//! validation ladder is the HTTP one minus its HTTP steps, and every handler runs as it does
//! over HTTP.
//!
//! - **Both eras.** 2026-07-28 requests describe themselves. A 2025-11-25 client sends
//!   `initialize` first (when the server serves legacy clients); the session it opens is
//!   this process's, so its later messages need no session id: they go to the legacy path
//!   (the 2025-11-25 wing) with that session, observed as 2026 requests are. A
//!   handler's `InputRequired` becomes `elicitation/create`, `sampling/createMessage` or
//!   `roots/list` requests on stdout (those the client's capabilities allow, else
//!   `-32021`); the client's answers, JSON-RPC responses on stdin, resume the call (late,
//!   duplicate and unknown ones are logged and dropped; an unanswered call fails after the
//!   server's legacy input timeout). Once `initialize` is answered, the session's
//!   notifications follow on stdout: `list_changed` for the server's lists and
//!   `notifications/resources/updated` for the URIs it subscribed to.
//! - **Concurrency.** Requests run concurrently and are answered as they finish, in any
//!   order; a handler's progress and log notifications are written as they come, between
//!   other messages. One writer puts every message on stdout, each on its own line.
//! - **Listen streams.** A `subscriptions/listen` request is acknowledged and then gets its
//!   notifications, tagged with its id, until the client sends `notifications/cancelled`
//!   for it (several may be open at once); at the end of the session each gets its graceful
//!   `SubscriptionsListenResult`.
//! - **Cancellation.** `notifications/cancelled` with a `requestId` drops the running
//!   handler (its [`RequestContext::cancellation`](crate::RequestContext::cancellation)
//!   fires) and no response is sent.
//! - **Bad input.** A line that is not JSON gets `-32700` without an id; other malformed
//!   messages get the ladder's error. A line over the [line limit](Stdio::line_limit) gets
//!   `-32600` without an id as soon as it crosses the limit, and the rest of it is read and
//!   dropped without being kept. A JSON-RPC response from a 2026-07-28 client is ignored
//!   (that era sends no server→client requests). The session goes on in every case.
//! - **Back-pressure.** At most [`max_in_flight`](Stdio::max_in_flight) handlers run at
//!   once, and as many more requests may wait for a slot (so a client can still cancel
//!   one); beyond that stdin is not read until a request finishes. The output queue is
//!   bounded too: a client that does not read stdout stops the server's progress, not its
//!   memory.
//! - **End.** At the end of stdin, or when the [shutdown](Stdio::shutdown) token is
//!   cancelled (the reference server cancels it at SIGTERM or SIGINT), no more input is
//!   read; requests in flight get the [drain timeout](Stdio::drain_timeout) to finish and
//!   be answered (then they are cancelled), listen streams end gracefully, the output is
//!   flushed and [`Stdio::serve`] returns. When stdout is closed by the other end, the
//!   session stops at once and returns quietly.
//!
//! # Example
//!
//! ```no_run
//! use stateless_mcp::transport::stdio::Stdio;
//! use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder()
//!         .tool(ToolDef::new("echo").handler(|_ctx: RequestContext, args: Echo| async move {
//!             Ok::<_, HandlerError>(args.text)
//!         }))
//!         .build()?;
//!     Stdio::new(server).serve().await?;
//!     Ok(())
//! }
//! ```

mod framing;
mod pipes;
mod session;

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::{Error, Server};

/// The default [`Stdio::line_limit`]: 4 MiB, the HTTP transport's default body limit.
pub(crate) const DEFAULT_LINE_LIMIT: usize = 4 * 1024 * 1024;
/// The default [`Stdio::max_in_flight`].
pub(crate) const DEFAULT_MAX_IN_FLIGHT: usize = 64;
/// The default [`Stdio::drain_timeout`].
pub(crate) const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The stdio transport for a [`Server`] (see the [module docs](self)).
///
/// ```no_run
/// use std::time::Duration;
/// use stateless_mcp::Server;
/// use stateless_mcp::transport::stdio::Stdio;
///
/// # async fn run() -> Result<(), stateless_mcp::Error> {
/// let server = Server::builder().build()?;
/// Stdio::new(server)
///     .line_limit(1024 * 1024)
///     .max_in_flight(16)
///     .drain_timeout(Duration::from_secs(5))
///     .serve()
///     .await
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Stdio {
    server: Server,
    line_limit: usize,
    max_in_flight: usize,
    drain_timeout: Duration,
    shutdown: CancellationToken,
}

impl Stdio {
    /// The transport for `server`, with the default limits.
    pub fn new(server: Server) -> Self {
        Stdio {
            server,
            line_limit: DEFAULT_LINE_LIMIT,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            shutdown: CancellationToken::new(),
        }
    }

    /// The longest accepted line (one message), in bytes, line ending excluded. Default
    /// 4 MiB.
    pub fn line_limit(mut self, bytes: usize) -> Self {
        self.line_limit = bytes.max(1);
        self
    }

    /// How many handlers run at once (at least 1; `0` and numbers beyond what a semaphore
    /// counts mean as many as it counts). Default 64.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        let most = tokio::sync::Semaphore::MAX_PERMITS / 2;
        self.max_in_flight = if n == 0 { most } else { n.min(most) };
        self
    }

    /// How long requests in flight get to finish once the input ends or the session shuts
    /// down. Default 10 s.
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// A token whose cancellation ends the session as the end of stdin does: no more input
    /// is read, requests in flight finish, then [`serve`](Self::serve) returns.
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    fn settings(&self) -> session::Settings {
        session::Settings {
            line_limit: self.line_limit,
            max_in_flight: self.max_in_flight,
            drain_timeout: self.drain_timeout,
        }
    }

    /// Serves the process's stdin and stdout until stdin ends, the shutdown token is
    /// cancelled or stdout is closed. Fails only when stdin cannot be read (after the
    /// requests in flight were answered).
    ///
    /// Reads and writes run on two threads of their own, so the runtime can shut down
    /// while a read of stdin is pending.
    pub async fn serve(self) -> Result<(), Error> {
        let settings = self.settings();
        session::run(
            self.server,
            settings,
            pipes::stdin(),
            pipes::stdout(),
            self.shutdown,
        )
        .await
        .map_err(|e| Error::io("cannot read stdin", e))
    }

    /// Serves any reader and writer (a pipe, a socket, an in-memory stream), as
    /// [`serve`](Self::serve) serves stdin and stdout.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), Error>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let settings = self.settings();
        session::run(
            self.server,
            settings,
            pipes::reader(reader),
            pipes::writer(writer),
            self.shutdown,
        )
        .await
        .map_err(|e| Error::io("cannot read the input", e))
    }
}

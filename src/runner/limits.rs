//! [`ConnectionLimits`]: what a [`Runner`](super::Runner) allows each connection, and how
//! many it holds at once. The defaults suit a replica on the open internet behind a load
//! balancer.

use std::time::Duration;

/// Connection-level limits of a [`Runner`](super::Runner), applied to every accepted
/// connection before any request reaches the MCP endpoint.
///
/// | limit | default | when exceeded |
/// |---|---|---|
/// | [`max_header_bytes`](Self::max_header_bytes) | 32 KiB | `431 Request Header Fields Too Large`, connection closed (HTTP/2: that stream refused with 431) |
/// | [`header_timeout`](Self::header_timeout) | 15 s | connection closed without an answer: an HTTP/1.1 request's line and headers did not all arrive in time, counted from the connection's first byte or the end of the previous response |
/// | [`idle_timeout`](Self::idle_timeout) | 120 s | an idle keep-alive connection (no request in flight, no stream open) is closed gracefully |
/// | [`max_connections`](Self::max_connections) | 20 000 | `503` with `Retry-After: 1` and `Connection: close` to the connections beyond it |
///
/// The idle timeout exceeds the 60 s a load balancer usually keeps idle upstream
/// connections (nginx `keepalive_timeout`, AWS ALB), so the proxy retires a pooled
/// connection before the replica closes it under a request. Open listen streams are not
/// idle: they are in flight, and their SSE keepalive comments keep proxies from timing them
/// out. Every refusal is counted in `mcp_http_refusals_total{reason}`.
///
/// ```
/// use std::time::Duration;
/// use stateless_mcp::settings::ConnectionLimits;
///
/// let limits = ConnectionLimits::default()
///     .max_connections(5_000)
///     .header_timeout(Duration::from_secs(10));
/// assert_eq!(limits.max_header_bytes, 32 * 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Largest request line plus headers, in bytes (at least 8 KiB). It is also the bound
    /// of hyper's HTTP/1.1 read buffer: at 8 KiB each connection keeps one 8 KiB buffer;
    /// above it the buffer doubles to 16 KiB on a connection's first request (hyper reserves
    /// 8 KiB of free room before each read), which is most of the difference for many idle
    /// HTTP/1.1 listen streams (about 15.6 KiB each at 8 KiB, 20.5 KiB at the default).
    pub max_header_bytes: usize,
    /// Time an HTTP/1.1 request's line and headers may take to arrive.
    pub header_timeout: Duration,
    /// Time a connection with nothing in flight stays open.
    pub idle_timeout: Duration,
    /// Connections held at once; more are answered 503 and closed.
    pub max_connections: usize,
}

/// The smallest header limit hyper's HTTP/1.1 parser takes.
pub(crate) const MIN_HEADER_BYTES: usize = 8 * 1024;

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_header_bytes: 32 * 1024,
            header_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(120),
            max_connections: 20_000,
        }
    }
}

impl ConnectionLimits {
    /// Largest request line plus headers, in bytes (raised to 8 KiB if smaller).
    pub fn max_header_bytes(mut self, bytes: usize) -> Self {
        self.max_header_bytes = bytes.max(MIN_HEADER_BYTES);
        self
    }

    /// Time an HTTP/1.1 request's line and headers may take to arrive (slowloris).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// Time a connection with nothing in flight stays open.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Connections held at once (at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }
}

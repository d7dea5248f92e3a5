//! Streamable HTTP: one endpoint (POST, and GET/DELETE for legacy sessions), JSON or SSE
//! replies, mirrored-header checks, DNS-rebinding protection and (optionally) CORS for
//! browser clients, as a plain tower service to mount in your own axum app, or served by the
//! [`Runner`](crate::Runner).
//!
//! [`StreamableHttp::into_service`] is the endpoint as one service that answers every request
//! it is given: mount it with `Router::route_service` or `nest_service`, under your own
//! layers; [`StreamableHttp::into_router`] is a router with it on its configured path, to
//! `merge`. Served by your own `axum::serve`, do what the runner does: `TCP_NODELAY` on
//! accepted sockets (axum's `ListenerExt::tap_io`), and at SIGTERM or Ctrl-C
//! ([`shutdown_signal`]) a graceful shutdown that ends the long-lived streams
//! ([`Server::drain`](crate::Server::drain)); `examples/mount_in_axum.rs` is a whole app.
//!
//! ```no_run
//! use axum::serve::ListenerExt as _;
//! use axum::{Router, routing::get};
//! use stateless_mcp::transport::http::shutdown_signal;
//! use stateless_mcp::{Server, StreamableHttp};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder().build()?;
//! let app = Router::new()
//!     .route("/health", get(|| async { "ok" }))
//!     .route_service("/mcp", StreamableHttp::new(server.clone()).into_service());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080")
//!     .await?
//!     .tap_io(|tcp| {
//!         let _ = tcp.set_nodelay(true);
//!     });
//! let stop = shutdown_signal();
//! axum::serve(listener, app)
//!     .with_graceful_shutdown(async move {
//!         stop.await;
//!         server.drain().await;
//!     })
//!     .await?;
//! # Ok(()) }
//! ```

mod chunks;
mod cors;
pub(crate) mod direct;
mod endpoint;
mod guard;
pub(crate) mod headers;
pub(crate) mod limits;
pub(crate) mod negotiate;
pub(crate) mod rejection;
pub(crate) mod reply;
pub(crate) mod request_headers;
mod service;
mod shutdown;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use axum::routing::any;
use http::Request;
use tokio_util::sync::CancellationToken;
use tower::Layer as _;
use tower::util::BoxCloneSyncService;

pub use headers::SESSION_ID;
pub use limits::RateLimit;
pub use shutdown::shutdown_signal;

pub(crate) use cors::Cors;

use crate::server::Server;
use endpoint::Endpoint;
use guard::AllowList;
use service::McpService;

/// The default body limit: 4 MiB.
pub(crate) const DEFAULT_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// The default time a request body may take to arrive: 60 s.
pub(crate) const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// The default bound on requests being answered at once: 1024.
pub(crate) const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

/// Configures the Streamable HTTP endpoint for a [`Server`].
///
/// Defaults: path `/mcp`, body limit 4 MiB, `Host` and `Origin` restricted to localhost
/// forms (`localhost`, `127.0.0.1`, `[::1]`, any port) — the safe choice for a local server;
/// widen them for a deployed one. SSE keepalive comments every 15 s. A body must arrive
/// within 60 s (408 otherwise); at most 1024 requests are answered at once (503 with
/// `Retry-After` beyond); no rate limit; no CORS.
///
/// ```
/// use std::time::Duration;
/// use stateless_mcp::{Server, StreamableHttp};
///
/// let server = Server::builder().build().unwrap();
/// let endpoint = StreamableHttp::new(server)
///     .path("/v1/mcp")
///     .allowed_hosts(["mcp.example.com"])
///     .allowed_origins(["https://app.example.com"])
///     .body_limit(1024 * 1024)
///     .keep_alive(Duration::from_secs(20))
///     .max_in_flight(Some(256));
/// assert_eq!(endpoint.endpoint_path(), "/v1/mcp");
/// // Serve it with `Runner::new(endpoint)`, or mount it: `endpoint.into_router()`.
/// let app: axum::Router = endpoint.into_router();
/// # drop(app);
/// ```
#[must_use]
#[derive(Clone)]
pub struct StreamableHttp {
    server: Server,
    path: String,
    body_limit: usize,
    hosts: AllowList,
    origins: AllowList,
    keep_alive: Duration,
    shutdown: CancellationToken,
    body_timeout: Duration,
    max_in_flight: Option<usize>,
    rate_limit: Option<RateLimit>,
    cors: bool,
}

impl std::fmt::Debug for StreamableHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttp")
            .field("path", &self.path)
            .field("body_limit", &self.body_limit)
            .finish_non_exhaustive()
    }
}

impl From<Server> for StreamableHttp {
    /// The endpoint for `server`, with defaults.
    fn from(server: Server) -> Self {
        StreamableHttp::new(server)
    }
}

impl StreamableHttp {
    /// The endpoint for `server`, with defaults.
    pub fn new(server: Server) -> Self {
        StreamableHttp {
            server,
            path: "/mcp".into(),
            body_limit: DEFAULT_BODY_LIMIT,
            hosts: AllowList::localhost(),
            origins: AllowList::localhost(),
            keep_alive: Duration::from_secs(15),
            shutdown: CancellationToken::new(),
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_in_flight: Some(DEFAULT_MAX_IN_FLIGHT),
            rate_limit: None,
            cors: false,
        }
    }

    /// The endpoint path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let p = path.into();
        self.path = if p.starts_with('/') {
            p
        } else {
            format!("/{p}")
        };
        self
    }

    /// The largest accepted body in bytes (default 4 MiB); larger bodies get 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Accepted `Host` names (`*` for any). Entries are host names, any port.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hosts = AllowList::from_entries(hosts.into_iter().map(Into::into));
        self
    }

    /// Accepted `Origin`s (`*` for any): full origins (`https://app.example.com`) or host
    /// names (any scheme and port). Requests without `Origin` are always accepted.
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.origins = AllowList::from_entries(origins.into_iter().map(Into::into));
        self
    }

    /// Accepts any `Host` (for servers behind a proxy that checks it, or bound publicly).
    pub fn allow_any_host(mut self) -> Self {
        self.hosts = AllowList::any();
        self
    }

    /// Interval of SSE keepalive comments.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = interval;
        self
    }

    /// The token that says the server is shutting down: cancel it when the listener stops
    /// accepting connections. Long-lived streams (`subscriptions/listen`) end when it is
    /// cancelled, so connections close and a graceful shutdown can finish; ordinary requests
    /// are left to complete. Default: a token nobody cancels.
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    /// How long a request body may take to arrive once its headers did (default 60 s); a
    /// slower one is answered 408.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// At most `max` requests are answered at once on this endpoint (default 1024; `None`:
    /// unbounded); one more gets 503 with `Retry-After: 1`. `subscriptions/listen` streams
    /// are not counted (see [`ListenLimits`](crate::settings::ListenLimits)).
    pub fn max_in_flight(mut self, max: Option<usize>) -> Self {
        self.max_in_flight = max;
        self
    }

    /// Limits the rate of requests per caller (default: none); see [`RateLimit`]. Over it:
    /// 429 with `Retry-After` and a JSON-RPC error echoing the request id. Apply an auth
    /// layer outside the endpoint (as [`Runner::auth`](crate::Runner::auth) does) to key it
    /// on the verified principal.
    pub fn rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.rate_limit = limit;
        self
    }

    /// Answers browsers' CORS requests from the [allowed origins](Self::allowed_origins)
    /// (default off): preflights (`OPTIONS`) for `POST`, `GET` and `DELETE` with the MCP
    /// request headers (`Content-Type`, `Authorization`, `MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name`, `Mcp-Param-*`, `Mcp-Session-Id`, `Last-Event-ID`), and
    /// `Access-Control-Allow-Origin` with `Mcp-Session-Id` and `WWW-Authenticate` exposed on
    /// the answers. Another origin gets no `Access-Control-*` header (and its requests 403
    /// from the `Origin` check). Built on tower-http's `CorsLayer`.
    ///
    /// The [`Runner`](crate::Runner) puts it outside the endpoint's layers (an authorization
    /// layer's 401 then carries it too, and preflights, which carry no token, are answered
    /// before it). Mounted yourself, it sits inside whatever you wrap the endpoint in.
    pub fn cors(mut self, on: bool) -> Self {
        self.cors = on;
        self
    }

    /// The CORS policy, if [`cors`](Self::cors) is on, taken out of the endpoint (for the
    /// runner, which puts it outside the endpoint's layers).
    pub(crate) fn take_cors(&mut self) -> Option<Cors> {
        std::mem::take(&mut self.cors).then(|| Cors::new(self.origins.clone()))
    }

    /// Whether requests must carry their peer address (`ConnectInfo<SocketAddr>`): a rate
    /// limit that keys callers without a principal on it. The [`Runner`](crate::Runner)
    /// provides it then.
    pub fn needs_peer_address(&self) -> bool {
        self.rate_limit
            .as_ref()
            .is_some_and(RateLimit::keys_on_peer)
    }

    /// The configured endpoint path.
    pub fn endpoint_path(&self) -> &str {
        &self.path
    }

    /// The server this endpoint serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The endpoint as a tower service that answers every request it is given, whatever
    /// its path (the configured [`path`](Self::path) is the router's, not the service's):
    /// mount it with `Router::route_service` or `nest_service` in your own router, under
    /// your own layers.
    ///
    /// ```
    /// use stateless_mcp::{Server, StreamableHttp};
    ///
    /// let server = Server::builder().build().unwrap();
    /// let app: axum::Router = axum::Router::new()
    ///     .route("/", axum::routing::get(|| async { "the app" }))
    ///     .route_service("/api/mcp", StreamableHttp::new(server).into_service());
    /// # drop(app);
    /// ```
    pub fn into_service(
        self,
    ) -> impl tower::Service<
        Request<Body>,
        Response = Response,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + Sync
    + 'static {
        self.build().1
    }

    /// An axum router serving the endpoint at its [`path`](Self::path); merge it into an
    /// application.
    pub fn into_router<S>(self) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        self.into_router_and_direct().0
    }

    /// [`into_router`](Self::into_router), and the same endpoint to answer requests to its
    /// path without the router ([`direct`]), when its path is fixed.
    pub(crate) fn into_router_and_direct<S>(self) -> (Router<S>, Option<direct::Direct>)
    where
        S: Clone + Send + Sync + 'static,
    {
        let (path, service) = self.build();
        let direct = direct::Direct::new(&path, service.clone());
        let router = match service {
            McpService::Plain(endpoint) => {
                Router::new().route(&path, any(endpoint::handle).with_state(endpoint))
            }
            layered => Router::new().route_service(&path, layered),
        };
        (router, direct)
    }

    /// The endpoint's path, and the endpoint as one service (inside its CORS policy when on).
    fn build(self) -> (String, McpService) {
        let cors = self.cors.then(|| Cors::new(self.origins.clone()));
        let endpoint = Arc::new(Endpoint {
            legacy: crate::legacy::Legacy::of(&self.server),
            server: self.server,
            body_limit: self.body_limit,
            hosts: self.hosts,
            origins: self.origins,
            keep_alive: self.keep_alive,
            shutdown: self.shutdown,
            watching_shutdown: Default::default(),
            body_timeout: self.body_timeout,
            in_flight: self
                .max_in_flight
                .map(limits::in_flight::InFlightLimit::new),
            rate: self.rate_limit.as_ref().map(limits::rate::RateGate::new),
        });
        let plain = McpService::Plain(endpoint);
        let service = match cors {
            None => plain,
            Some(cors) => McpService::Layered(BoxCloneSyncService::new(cors.layer(plain))),
        };
        (self.path, service)
    }
}

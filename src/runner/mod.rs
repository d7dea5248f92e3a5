//! Serving a [`Server`](crate::Server) in production: the [`Runner`] (TCP_NODELAY, HTTP/1.1 and h2c,
//! probes and metrics, list announcement, graceful drain).

mod accept;
mod announce;
mod connection;
mod dispatch;
mod drain;
mod limits;
mod signal;
mod stamp;
mod watch;
mod wrap;

pub use limits::ConnectionLimits;
pub(crate) use wrap::EndpointService;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::routing::Route;
use dispatch::Dispatch;
use http::{HeaderName, HeaderValue};
use tokio::net::TcpListener;
use tower::{Layer, Service};

#[cfg(feature = "prometheus")]
use crate::observability::PrometheusMetrics;
use crate::observability::{HEALTHZ_PATH, READYZ_PATH, Readiness, health_router_at};
use crate::{Error, StreamableHttp};

type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;
/// Where to listen: an address to bind, or a listener bound already.
enum Bind {
    Addr(SocketAddr),
    Listener(TcpListener),
}

impl Bind {
    async fn listener(self, what: &str) -> Result<TcpListener, Error> {
        match self {
            Bind::Addr(addr) => connection::bind(addr, what).await,
            Bind::Listener(l) => Ok(l),
        }
    }
}

/// Serves a [`Server`](crate::Server) over Streamable HTTP until its shutdown signal, then drains.
///
/// What it does, so your server gets what the reference server gets:
///
/// - **Sockets.** `TCP_NODELAY` on every accepted connection (small SSE writes such as
///   progress events otherwise wait for delayed ACKs, ~40 ms each); HTTP/1.1 and HTTP/2
///   without TLS (h2c) on the same port.
/// - **Connection limits** ([`ConnectionLimits`]): request heads over 32 KiB get 431, an
///   HTTP/1.1 head must arrive within 15 s (slowloris), idle connections close after
///   120 s, and connections beyond 20 000 get 503 with `Retry-After`.
/// - **Routes.** The MCP endpoint (optionally behind an authorization layer), your own axum
///   routes next to it, and `/healthz`, `/readyz` (paths: [`health_paths`](Self::health_paths))
///   and (feature `prometheus`) `/metrics`, on the same listener or a separate admin
///   listener. A route of yours on a probe's or the metrics' path is yours: it answers
///   there, and the runner's probe only where yours does not.
/// - **Start.** Announces the server's list fingerprints on its bus
///   ([`Server::announce_lists`](crate::Server::announce_lists), retried while a broker connects), so replicas of another
///   version tell their listen streams what changed.
/// - **Graceful drain.** At the shutdown signal (SIGINT or SIGTERM unless you give another):
///   `/readyz` answers 503 at once; after the drain delay (or a second signal) the listeners
///   close, `subscriptions/listen` streams end gracefully and tasks still running on this
///   replica become `failed` (they had the drain delay to finish); connections already open are
///   served for one second more, each response with `Connection: close`, so a proxy's
///   keep-alive pool retires them instead of racing their close; then idle connections
///   close and in-flight requests get the shutdown timeout to finish.
///
/// ```no_run
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use stateless_mcp::{HandlerError, RequestContext, Runner, Server, ToolDef};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Echo {
///     /// The text to send back.
///     text: String,
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder()
///     .tool(ToolDef::new("echo").handler(|_ctx: RequestContext, args: Echo| async move {
///         Ok::<_, HandlerError>(args.text)
///     }))
///     .build()?;
/// Runner::new(server)
///     .listen(([127, 0, 0, 1], 8080))
///     .routes(axum::Router::new().route("/hello", axum::routing::get(|| async { "hi" })))
///     .serve()
///     .await?;
/// # Ok(()) }
/// ```
///
/// Defaults: listen on `127.0.0.1:8080`, `/healthz` and `/readyz` on the same listener, no
/// `/metrics`, a drain delay of 5 s and a shutdown timeout of 25 s, shutdown at SIGINT or
/// SIGTERM.
///
/// ```no_run
/// use std::time::Duration;
/// use stateless_mcp::{Runner, Server, StreamableHttp};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder().build()?;
/// let endpoint = StreamableHttp::new(server).path("/api/mcp").allow_any_host();
/// Runner::new(endpoint)
///     .listen(([0, 0, 0, 0], 8080))
///     .admin_listen(([127, 0, 0, 1], 9090))
///     .drain_delay(Duration::from_secs(10))
///     .serve()
///     .await?;
/// # Ok(()) }
/// ```
///
/// # Mounting into your own axum app instead
///
/// [`StreamableHttp::into_service`] gives the endpoint as a plain tower service to mount in
/// an application you serve yourself (`Router::route_service`). Then your app must do what
/// the runner does: set `TCP_NODELAY` on accepted sockets (`axum::serve::ListenerExt::tap_io`)
/// and, at SIGTERM or Ctrl-C ([`shutdown_signal`](crate::transport::http::shutdown_signal)),
/// end the long-lived streams with [`Server::drain`](crate::Server::drain) (they never end
/// on their own, so a graceful shutdown would wait forever). See the
/// [`transport::http`](crate::transport::http) module and `examples/mount_in_axum.rs`.
#[must_use]
pub struct Runner {
    endpoint: StreamableHttp,
    wrapping: wrap::Wrapping,
    routes: Router,
    listen: Bind,
    admin: Option<Bind>,
    health: bool,
    health_paths: (String, String),
    #[cfg(feature = "prometheus")]
    metrics: Option<PrometheusMetrics>,
    readiness: Readiness,
    header: Option<(HeaderName, HeaderValue)>,
    timing: drain::Timing,
    limits: ConnectionLimits,
    signal: Option<Signal>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("endpoint", &self.endpoint)
            .field("health", &self.health)
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner for `endpoint`: a [`Server`](crate::Server) (served at `/mcp` with the default
    /// [`StreamableHttp`] settings) or a configured [`StreamableHttp`]. Its shutdown token is
    /// set by the runner.
    pub fn new(endpoint: impl Into<StreamableHttp>) -> Self {
        Runner {
            endpoint: endpoint.into(),
            wrapping: wrap::Wrapping::default(),
            routes: Router::new(),
            listen: Bind::Addr(SocketAddr::from(([127, 0, 0, 1], 8080))),
            admin: None,
            health: true,
            health_paths: (HEALTHZ_PATH.to_owned(), READYZ_PATH.to_owned()),
            #[cfg(feature = "prometheus")]
            metrics: None,
            readiness: Readiness::new(),
            header: None,
            timing: drain::Timing {
                delay: Duration::from_secs(5),
                timeout: Duration::from_secs(25),
            },
            limits: ConnectionLimits::default(),
            signal: None,
        }
    }

    /// The address to listen on (default `127.0.0.1:8080`).
    pub fn listen(mut self, addr: impl Into<SocketAddr>) -> Self {
        self.listen = Bind::Addr(addr.into());
        self
    }

    /// A listener bound already (to know an ephemeral port before serving, or to take one
    /// over from a supervisor).
    pub fn listener(mut self, listener: TcpListener) -> Self {
        self.listen = Bind::Listener(listener);
        self
    }

    /// Serves `/healthz`, `/readyz` and `/metrics` on this address instead of next to the
    /// MCP endpoint.
    pub fn admin_listen(mut self, addr: impl Into<SocketAddr>) -> Self {
        self.admin = Some(Bind::Addr(addr.into()));
        self
    }

    /// Like [`Runner::admin_listen`] with a listener bound already.
    pub fn admin_listener(mut self, listener: TcpListener) -> Self {
        self.admin = Some(Bind::Listener(listener));
        self
    }

    /// Your own routes, served next to the MCP endpoint (outside its authorization layer).
    ///
    /// A route on a path the runner serves too (`/healthz`, `/readyz`, `/metrics`) is yours:
    /// requests to that path go to your routes first, and to the runner's only when none of
    /// yours matches (another method, say). So an app that has its own `/healthz` keeps it,
    /// and keeps the runner's `/readyz`; [`health_paths`](Self::health_paths) moves the
    /// runner's probes elsewhere.
    ///
    /// # Panics
    ///
    /// As axum's `Router::merge` does, when a route overlaps another one given here or the
    /// MCP endpoint's own path: here, while the runner is built, never once it serves.
    pub fn routes(mut self, routes: Router) -> Self {
        // Any route on the endpoint's path would overlap it when the runner merges them: the
        // same merge now, so it fails here.
        let path = self.endpoint.endpoint_path().to_owned();
        let endpoint_path: Router = Router::new().route_service(
            &path,
            tower::service_fn(|_: Request| async {
                Ok::<Response, Infallible>(Response::default())
            }),
        );
        let _ = endpoint_path.merge(routes.clone());
        self.routes = self.routes.merge(routes);
        self
    }

    /// Wraps the MCP endpoint's router in anything a router can be wrapped in. Your own
    /// routes and the probes are not wrapped.
    ///
    /// Without it, the runner answers requests to the endpoint's path without the router
    /// (one comparison of the path instead of axum's routing); a wrapped router must see
    /// every request, so with it all of them go through the router. For a tower layer,
    /// [`layer_endpoint`](Self::layer_endpoint) keeps the direct answers.
    pub fn wrap_endpoint(mut self, wrap: impl FnOnce(Router) -> Router + Send + 'static) -> Self {
        self.wrapping.router(wrap);
        self
    }

    /// Wraps the MCP endpoint in a tower layer, for instance one that authorizes requests
    /// or puts a value into their extensions: what `.wrap_endpoint(|r| r.route_layer(layer))`
    /// does, with requests to the endpoint's path still answered without the router (the
    /// layer wraps the endpoint as a boxed service for those). Layers apply in the
    /// order given, innermost first; your own routes and the probes are not wrapped.
    /// Requests answered without the router carry none of the extensions axum's routing
    /// adds (`MatchedPath`, `OriginalUri`, path parameters): a layer that reads them belongs
    /// in [`wrap_endpoint`](Self::wrap_endpoint).
    pub fn layer_endpoint<L>(mut self, layer: L) -> Self
    where
        L: Layer<Route> + Layer<EndpointService> + Clone + Send + Sync + 'static,
        <L as Layer<Route>>::Service:
            Service<Request, Error = Infallible> + Clone + Send + Sync + 'static,
        <<L as Layer<Route>>::Service as Service<Request>>::Response: IntoResponse + 'static,
        <<L as Layer<Route>>::Service as Service<Request>>::Future: Send + 'static,
        <L as Layer<EndpointService>>::Service: Service<Request, Response = Response, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        <<L as Layer<EndpointService>>::Service as Service<Request>>::Future: Send + 'static,
    {
        let on_route = layer.clone();
        self.wrapping.layer(
            move |r| r.route_layer(on_route),
            move |s| EndpointService::new(layer.layer(s)),
        );
        self
    }

    /// Protects the MCP endpoint with an OAuth 2.1 resource server (its
    /// [`layer`](crate::auth::ResourceServer::layer), through
    /// [`layer_endpoint`](Self::layer_endpoint)); its RFC 9728 metadata routes are served
    /// unauthenticated next to it.
    #[cfg(feature = "auth")]
    pub fn auth(self, resource_server: crate::auth::ResourceServer) -> Self {
        let metadata = resource_server.metadata_router();
        self.layer_endpoint(resource_server.layer())
            .routes(metadata)
    }

    /// Whether to serve `/healthz` and `/readyz` (default on).
    pub fn health(mut self, on: bool) -> Self {
        self.health = on;
        self
    }

    /// Serves the liveness probe at `live` and the readiness probe at `ready` instead of
    /// `/healthz` and `/readyz`.
    pub fn health_paths(mut self, live: impl Into<String>, ready: impl Into<String>) -> Self {
        self.health_paths = (live.into(), ready.into());
        self
    }

    /// Serves the metrics of `metrics` at `/metrics` (in the Prometheus text format).
    #[cfg(feature = "prometheus")]
    pub fn metrics(mut self, metrics: PrometheusMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The readiness `/readyz` reports (default: a new one). Pass the one whose conditions
    /// your components flip, such as the bus's
    /// ([`BusOptions::readiness`](crate::backends::bus::BusOptions::readiness)); the runner marks it
    /// draining at the shutdown signal.
    pub fn readiness(mut self, readiness: Readiness) -> Self {
        self.readiness = readiness;
        self
    }

    /// A header set on every response (for instance the name of the replica that answered).
    pub fn response_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.header = Some((name, value));
        self
    }

    /// How long `/readyz` answers 503 before the listeners close (default 5 s): time for the
    /// load balancer to take the replica out of rotation.
    pub fn drain_delay(mut self, delay: Duration) -> Self {
        self.timing.delay = delay;
        self
    }

    /// How long in-flight requests get to finish once the listeners closed (default 25 s);
    /// then [`Runner::serve`] returns anyway.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.timing.timeout = timeout;
        self
    }

    /// The limits every accepted connection is held to: request head size and time, idle
    /// time, connections at once (default [`ConnectionLimits::default`]).
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Drains when `signal` resolves instead of at SIGINT or SIGTERM (a later SIGINT or
    /// SIGTERM still cuts the drain delay short). To stop from code, pass a token's
    /// `cancelled_owned()`.
    pub fn shutdown_signal(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.signal = Some(Box::pin(signal));
        self
    }

    /// The probes and metrics routes this runner serves, and their paths.
    fn ops_router(&self) -> (Router, Vec<String>) {
        let mut router = Router::new();
        let mut paths = Vec::new();
        if self.health {
            let (live, ready) = &self.health_paths;
            router = router.merge(health_router_at(self.readiness.clone(), live, ready));
            paths.extend([live.clone(), ready.clone()]);
        }
        #[cfg(feature = "prometheus")]
        if let Some(m) = &self.metrics {
            router = router.merge(m.router(crate::observability::METRICS_PATH));
            paths.push(crate::observability::METRICS_PATH.to_owned());
        }
        (router, paths)
    }

    /// Serves until the shutdown signal, then drains; returns `Ok` once drained (or when the
    /// shutdown timeout ran out). Fails when a listener cannot be bound or a server fails.
    pub async fn serve(mut self) -> Result<(), Error> {
        // Installed before anything listens, so an early SIGTERM still drains.
        let signal = self
            .signal
            .take()
            .unwrap_or_else(|| Box::pin(drain::signal()));
        // Cancelled when the listeners close; long-lived streams end on it.
        let closed = signal::Signal::default();
        // Cancelled a moment later: idle connections close, the servers finish.
        let stop = signal::Signal::default();
        let (ops, ops_paths) = self.ops_router();
        let Runner {
            mut endpoint,
            mut wrapping,
            routes,
            listen,
            admin,
            header,
            readiness,
            timing,
            limits,
            ..
        } = self;
        let settings = accept::Settings {
            limits,
            peer_address: endpoint.needs_peer_address(),
        };
        let server = endpoint.server().clone();
        let path = endpoint.endpoint_path().to_owned();
        // CORS outside every layer of the endpoint: preflights carry no token, and a 401's
        // challenge must reach the browser's script.
        if let Some(cors) = endpoint.take_cors() {
            let direct = cors.clone();
            wrapping.layer(
                move |r| r.route_layer(cors),
                move |s| EndpointService::new(tower::Layer::layer(&direct, s)),
            );
        }
        let endpoint = endpoint.shutdown(closed.token().clone());
        let (mcp, direct) = endpoint.into_router_and_direct();
        let (mcp, direct) = wrapping.apply(mcp, direct);
        let app = mcp.merge(dispatch::mark_own(routes));
        let listener = listen.listener("listen").await?;
        let local = connection::local_addr(&listener)?;
        let mut servers = Vec::new();
        match admin {
            Some(admin) => {
                let admin = admin.listener("admin listen").await?;
                let admin_local = connection::local_addr(&admin)?;
                tracing::info!(admin_address = %admin_local, "serving /healthz, /readyz and /metrics");
                tracing::info!(address = %local, path = %path, "serving MCP");
                servers.push(connection::spawn(
                    listener,
                    Dispatch::new(app, direct, None),
                    header.clone(),
                    settings,
                    &closed,
                    stop.clone(),
                )?);
                servers.push(connection::spawn(
                    admin,
                    Dispatch::new(ops, None, None),
                    header,
                    settings,
                    &closed,
                    stop.clone(),
                )?);
            }
            None => {
                tracing::info!(address = %local, path = %path, "serving MCP");
                servers.push(connection::spawn(
                    listener,
                    Dispatch::new(app, direct, Some((ops, ops_paths))),
                    header,
                    settings,
                    &closed,
                    stop.clone(),
                )?);
            }
        }
        // Tasks still running when the listeners close (the drain delay is over) fail
        // explicitly rather than wait for their lease to lapse.
        let tasks = server.clone();
        let closing = closed.token().clone();
        tokio::spawn(async move {
            closing.cancelled().await;
            tasks.stop_tasks().await;
        });
        announce::spawn(server, stop.token().clone());
        drain::run(servers, signal, &readiness, &closed, &stop, timing).await
    }
}

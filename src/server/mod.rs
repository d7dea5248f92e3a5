//! The core: transport-agnostic dispatch. The validation ladder, capability gating,
//! pagination, caching fields and the running of handlers; it knows nothing of HTTP, of the
//! 2025-11-25 era or of the Tasks extension (wings that hold a [`Server`] and call it).
//!
//! A transport hands [`Server::handle`] the raw body, the mirrored header values it
//! extracted (or `None` where the transport has no headers, as on stdio), and its request
//! extensions. It gets back an [`Outcome`]: a notification was accepted, a reply is ready, or
//! a handler is running and may send notifications before its reply.
//!
//! # Layout
//!
//! [`Server`] is a thin handle (this file, the ladder and the builder hold its methods) over
//! components that own their state; no file reads another component's fields:
//!
//! - `catalog` ([`catalog::Serving`]): the serving version of the registry and its encoded
//!   lists (`lists`, `cursor`), swapped whole by a runtime change ([`Catalog`]), the scopes
//!   declared on it (`scopes`), and who follows its changes; `advertised`: what it
//!   advertises (fixed at build).
//! - `listen` ([`listen::Listeners`]): the replica's listen streams, their fan-out of bus
//!   events (`fanout`, `spliced`) and the list versions they watch (`versions`).
//! - `mrtr` ([`mrtr::Sealer`]): what a retry brings, single-use claims in the replay store,
//!   sealing `input_required` answers; `seal/`: the key ring, bindings, and sealed tokens.
//! - `runner`: running a handler (context, cancellation, panic isolation, stamping), with
//!   `ask`, the one seam through which a handler's request for input reaches its client,
//!   whose strategy the caller picks by era.
//! - `ladder`: [`Server::handle`], the validation ladder in order, routing, and the one
//!   place every request is observed (mechanics in `observed`); `methods/`: one file per
//!   method family that runs a handler (`tools/call`, `resources/read`, `prompts/get`,
//!   `completion/complete`).
//! - `family`: the seam of the Tasks extension: the ladder (`tasks/*`) and `tools/call` (a
//!   task-capable tool, the client declaring the extension) hand work to the
//!   [`TaskFamily`] the builder plugs in.
//! - `envelope` (reading the body), `mirror` (header checks), `outcome` and `reply` (what
//!   goes back to the transport), `service` (the core as a tower `Service`).

pub(crate) mod advertised;
mod ask;
pub(crate) mod catalog;
mod cursor;
pub(crate) mod envelope;
pub(crate) mod family;
mod fanout;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzz;
pub(crate) mod idempotency;
mod ladder;
pub(crate) mod listen;
pub(crate) mod lists;
mod methods;
mod mirror;
pub(crate) mod mrtr;
mod observed;
mod outcome;
pub(crate) mod reply;
mod runner;
mod scopes;
pub(crate) mod seal;
mod service;
mod spliced;
#[cfg(test)]
mod test_support;
pub(crate) mod versions;

use std::any::Any;
use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;

pub(crate) use ask::{Ask, AskClient};
pub use catalog::{Applied, Catalog, CatalogChange};
pub use idempotency::IdempotencySettings;
pub(crate) use listen::listen_closed;
pub use listen::{Listen, ListenLimits};
pub use mirror::{Mirrored, MirroredHeaders};
pub(crate) use observed::{Labels, Observed};
pub use outcome::{Outcome, Running};
pub(crate) use reply::Body as ReplyBody;
pub use reply::Reply;
pub use seal::{StateKeys, StateKeysError};
pub use service::Incoming;

use crate::protocol::{CachePolicy, Implementation, ResultMeta};

/// A built MCP server: its catalog (what it serves, changed at runtime through
/// [`Server::catalog`]) and its settings. Cheap to clone (an `Arc`).
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// The serving version of the registry and its encoded lists.
    pub(crate) catalog: Arc<catalog::Serving>,
    /// The `server/discover` result, encoded once.
    pub(crate) discover: reply::Encoded,
    pub(crate) supported_versions: Vec<&'static str>,
    pub(crate) result_meta: ResultMeta,
    pub(crate) read_cache: CachePolicy,
    pub(crate) server_info: Arc<Implementation>,
    /// `server_info` as the `_meta` member of results, encoded once.
    pub(crate) stamp: reply::Stamp,
    pub(crate) event_buffer: usize,
    /// Sealing and opening `requestState`, claiming single-use states.
    pub(crate) sealer: mrtr::Sealer,
    pub(crate) notifier: crate::notify::Notifier,
    pub(crate) listeners: listen::Listeners,
    pub(crate) states: Arc<crate::handler::state::States>,
    /// What the wings keep per replica (the 2025-11-25 era's state).
    pub(crate) wings: Wings,
    /// Opens each request's span and metrics series (labels from the frozen registry).
    pub(crate) observer: crate::observability::RequestObserver,
    /// The Tasks extension (`tasks/*`, tools called as tasks), plugged in by the builder.
    pub(crate) tasks: Arc<dyn TaskFamily>,
    /// Keys and first results of idempotent tool calls.
    pub(crate) idempotency: idempotency::Idempotency,
}

/// A method family plugged into the core from outside it: the Tasks extension. The core
/// holds one as `Arc<dyn TaskFamily>` and calls it only for the `tasks/*` methods and for a
/// task-capable `tools/call` from a client that declared the extension.
pub(crate) trait TaskFamily: Send + Sync {
    /// Answers a `tasks/get`, `tasks/update` or `tasks/cancel` request (gated and read by the
    /// core already).
    fn answer(&self, server: &Server, request: family::TaskRequest) -> Outcome;

    /// Runs a `tools/call` as a task: answers its `CreateTaskResult` (or an inline
    /// `input_required` round) and drives the handler on in the background.
    fn call_as_task(&self, server: &Server, call: family::TaskCall) -> Outcome;

    /// Fails every task still running on this replica and stops its handler (the drain);
    /// returns how many it failed.
    fn stop<'a>(&'a self, server: &'a Server) -> BoxFuture<'a, usize>;

    /// How many task handlers run on this replica now.
    fn running(&self) -> usize;
}

/// What the wings keep per replica, carried by the core without knowing their types (one
/// value per type): a wing holds a [`Server`] and finds its state here.
#[derive(Default)]
pub(crate) struct Wings(Vec<Arc<dyn Any + Send + Sync>>);

impl Wings {
    /// These wings and `state`.
    pub(crate) fn with<T: Any + Send + Sync>(mut self, state: T) -> Self {
        self.0.push(Arc::new(state));
        self
    }

    fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.0.iter().find_map(|w| w.clone().downcast::<T>().ok())
    }
}

impl Server {
    /// The server made of `inner` (for the builder).
    pub(crate) fn from_inner(inner: Inner) -> Server {
        Server {
            inner: Arc::new(inner),
        }
    }
}

/// A [`Server`] that does not keep it alive, for a family's background upkeep.
#[derive(Clone)]
pub(crate) struct WeakServer(Weak<Inner>);

impl WeakServer {
    /// The server, unless it was dropped.
    pub(crate) fn upgrade(&self) -> Option<Server> {
        self.0.upgrade().map(|inner| Server { inner })
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let now = self.inner.catalog.load();
        f.debug_struct("Server")
            .field("server_info", &self.inner.server_info)
            .field("version", &now.version)
            .field("tools", &now.registry.tools.len())
            .field("resources", &now.registry.resources.len())
            .field("prompts", &now.registry.prompts.len())
            .finish()
    }
}

impl Server {
    /// The protocol versions this server accepts.
    pub fn supported_versions(&self) -> &[&'static str] {
        &self.inner.supported_versions
    }

    /// The handle that announces changes to listening clients (the one given to
    /// [`ServerBuilder::notifier`](crate::ServerBuilder::notifier), or an in-process one).
    pub fn notifier(&self) -> &crate::notify::Notifier {
        &self.inner.notifier
    }

    /// Closes every open `subscriptions/listen` stream gracefully (each gets its
    /// `SubscriptionsListenResult`), and every later one as soon as it is acknowledged. Call
    /// it when the process starts draining.
    pub fn close_listen_streams(&self) {
        self.inner.listeners.shutdown().cancel();
    }

    /// How many `subscriptions/listen` streams are open on this replica.
    pub fn listen_streams(&self) -> usize {
        self.inner.listeners.open()
    }

    /// Digests of this server's tool, prompt and resource lists, as now served.
    pub fn list_fingerprints(&self) -> crate::notify::ListFingerprints {
        (*self.inner.catalog.load().fingerprints).clone()
    }

    /// Publishes this server's [list fingerprints](Self::list_fingerprints) on its bus. Every
    /// replica whose lists differ (another version, during a rolling deploy) then tells its
    /// listen streams which lists changed; replicas with the same lists do nothing. Call it
    /// once when the replica starts serving (the reference server does); publishing may
    /// fail while a broker-backed bus is still connecting, so retry on error.
    pub async fn announce_lists(&self) -> Result<(), crate::Error> {
        let event = crate::notify::ChangeEvent::ServerFingerprint(self.list_fingerprints());
        self.inner.notifier.publish(event).await
    }

    /// The `x-mcp-header` parameters of the tool `name` (none for an unknown tool): what a
    /// client mirrors into `Mcp-Param-*` (the in-process test client does).
    #[cfg(feature = "testing")]
    pub(crate) fn tool_header_params(
        &self,
        name: &str,
    ) -> Vec<crate::handler::header_rules::HeaderParam> {
        let now = self.inner.catalog.load();
        now.registry
            .tool(name)
            .map_or_else(Vec::new, |t| t.header_params.clone())
    }

    /// The state a wing keeps here, if it has any.
    pub(crate) fn wing<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.inner.wings.get::<T>()
    }

    /// Sealing, opening and claiming `requestState` (its key ring seals the wings' own
    /// tokens too, by purpose).
    pub(crate) fn sealer(&self) -> &mrtr::Sealer {
        &self.inner.sealer
    }

    /// Keys and first results of idempotent tool calls.
    pub(crate) fn idempotency(&self) -> &idempotency::Idempotency {
        &self.inner.idempotency
    }

    /// The serving version of the registry and its encoded lists.
    pub(crate) fn serving(&self) -> &catalog::Serving {
        &self.inner.catalog
    }

    /// The cache policy of `resources/read` results that set none.
    pub(crate) fn read_cache(&self) -> CachePolicy {
        self.inner.read_cache
    }

    /// The `_meta` of results the server makes itself (`serverInfo`).
    pub(crate) fn result_meta(&self) -> &ResultMeta {
        &self.inner.result_meta
    }

    /// `serverInfo` as the `_meta` member of results, encoded once.
    pub(crate) fn stamp(&self) -> &reply::Stamp {
        &self.inner.stamp
    }

    /// How many messages a running handler may queue before its reply.
    pub(crate) fn event_buffer(&self) -> usize {
        self.inner.event_buffer
    }

    /// The states handlers take as `State<T>`.
    pub(crate) fn states(&self) -> &Arc<crate::handler::state::States> {
        &self.inner.states
    }

    /// The handle that changes this server's tools, prompts and resources at runtime.
    pub fn catalog(&self) -> Catalog {
        Catalog::of(self.inner.catalog.clone())
    }

    /// The scopes declared on what a request for `method` names: the tool (`tools/call`),
    /// prompt (`prompts/get`), or fixed resource or first matching template
    /// (`resources/read`) called `name`. Empty for anything else.
    pub fn required_scopes(&self, method: &str, name: Option<&str>) -> Vec<String> {
        self.inner.catalog.required_scopes(method, name).to_vec()
    }

    /// Every scope declared on any definition, sorted, without repeats.
    pub fn declared_scopes(&self) -> Vec<String> {
        self.inner.catalog.declared_scopes()
    }

    /// What the server advertises (fixed at build).
    pub(crate) fn advertised(&self) -> advertised::Advertised {
        self.inner.catalog.advertised()
    }

    /// The replica's listen streams (slots, limits, drain).
    pub(crate) fn listeners(&self) -> &listen::Listeners {
        &self.inner.listeners
    }

    /// Fails every task still running on this replica (`-32603`, "the replica shut down")
    /// and stops its handler. The drain calls it once the drain delay is over, so running
    /// tasks get that long to finish; none is left `working`. Returns how many it failed.
    pub async fn stop_tasks(&self) -> usize {
        self.inner.tasks.stop(self).await
    }

    /// Ends this replica's long-lived work so that a graceful shutdown can finish: closes
    /// every `subscriptions/listen` stream and legacy GET stream gracefully (and every later
    /// one as soon as it is acknowledged: [`close_listen_streams`](Self::close_listen_streams)),
    /// then fails the tasks still running here ([`stop_tasks`](Self::stop_tasks)). Ordinary
    /// requests are left to finish.
    ///
    /// The [`Runner`](crate::Runner) does this when its listeners close. An app served by its
    /// own `axum::serve` calls it in its `with_graceful_shutdown` future, after the signal
    /// ([`shutdown_signal`](crate::transport::http::shutdown_signal)): without it, the
    /// graceful shutdown would wait for listen streams that never end on their own.
    pub async fn drain(&self) {
        self.close_listen_streams();
        let failed = self.stop_tasks().await;
        if failed > 0 {
            tracing::info!(failed, "draining: tasks still running here failed");
        }
    }

    /// How many task handlers run on this replica now.
    pub fn running_tasks(&self) -> usize {
        self.inner.tasks.running()
    }

    /// The Tasks extension plugged into this server.
    pub(crate) fn tasks(&self) -> &dyn TaskFamily {
        &*self.inner.tasks
    }

    /// A handle on this server that does not keep it alive.
    pub(crate) fn downgrade(&self) -> WeakServer {
        WeakServer(Arc::downgrade(&self.inner))
    }

    /// The server's implementation info (sent in every result's `_meta`).
    pub fn server_info(&self) -> &Implementation {
        &self.inner.server_info
    }
}

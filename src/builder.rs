//! Building a [`Server`]: register handlers, set policies, freeze. The builder composes the
//! core (`server`) and its wings: the 2025-11-25 era (`legacy`) when it is on, and the Tasks
//! extension (`tasks`), whose state the core keeps without knowing it.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use crate::Error;
use crate::handler::completion::CompletionFn;
use crate::handler::registry::{Definitions, Registry};
use crate::handler::state::States;
use crate::handler::{
    CompletionHandler, Handler, HandlerError, PromptDef, ResourceDef, ResourceTemplateDef, ToolDef,
};
use crate::legacy::{DEFAULT_INPUT_TIMEOUT, DEFAULT_SESSION_TTL};
use crate::notify::Notifier;
use crate::protocol::{
    CachePolicy, CompleteRequest, CompleteResult, DiscoverResult, Implementation, JsonObject,
    LATEST_PROTOCOL_VERSION, ListChangedCapability, ResourcesCapability, ResultMeta,
    ServerCapabilities,
};
use crate::server::advertised::Advertised;
use crate::server::catalog::{Followers, Serving, Snapshot};
use crate::server::listen::{ListenLimits, Listeners};
use crate::server::lists::ListSettings;
use crate::server::seal::{DEFAULT_STATE_TTL, StateKeys};
use crate::server::{Inner, Server, Wings, mrtr, reply};

/// Builds a [`Server`]. Every definition is checked by [`ServerBuilder::build`]: duplicate
/// or invalid names, non-object input schemas and `x-mcp-header` annotations that break the
/// rules are errors there, never at request time.
///
/// ```
/// use std::time::Duration;
/// use stateless_mcp::protocol::{CachePolicy, CacheScope, Implementation};
/// use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
/// use stateless_mcp::settings::ListenLimits;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo {
///     text: String,
/// }
///
/// let server = Server::builder()
///     .server_info(Implementation::new("my-server", "1.2.0"))
///     .instructions("Tools for the docs site.")
///     .tool(ToolDef::new("echo").handler(|_ctx: RequestContext, args: Echo| async move {
///         Ok::<_, HandlerError>(args.text)
///     }))
///     .page_size(50)
///     .list_cache(CachePolicy::new(300_000, CacheScope::Public))
///     .state_ttl(Duration::from_secs(120))
///     .listen_limits(ListenLimits::default().max_streams(5_000))
///     .build()
///     .unwrap();
/// assert_eq!(server.catalog().tool_names(), ["echo"]);
/// ```
#[must_use]
pub struct ServerBuilder {
    defs: Definitions,
    server_info: Implementation,
    instructions: Option<String>,
    page_size: usize,
    list_cache: CachePolicy,
    discover_cache: CachePolicy,
    read_cache: CachePolicy,
    logging: bool,
    advertise: Advertised,
    event_buffer: usize,
    state_keys: Option<StateKeys>,
    state_ttl: Duration,
    notifier: Option<Notifier>,
    replay: Option<Arc<dyn crate::backends::replay::ReplayStore>>,
    listen_limits: ListenLimits,
    states: States,
    legacy: bool,
    session_store: Option<Arc<dyn crate::legacy::store::SessionStore>>,
    session_ttl: Duration,
    session_idle: Option<Duration>,
    legacy_input_timeout: Duration,
    task_store: Option<Arc<dyn crate::tasks::TaskStore>>,
    task_settings: crate::tasks::TaskSettings,
    tool_timeout: Option<Duration>,
    idempotency_store: Option<Arc<dyn crate::backends::idempotency::IdempotencyStore>>,
    event_store: Option<Arc<dyn crate::backends::events::EventStore>>,
    resumable_get_streams: bool,
    idempotency: crate::server::IdempotencySettings,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("server_info", &self.server_info)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl Default for ServerBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerBuilder {
    /// A builder with defaults: pages of 100, lists and discover cacheable for 60 s
    /// (`public`), resource reads for 0 ms, logging advertised.
    pub fn new() -> Self {
        ServerBuilder {
            defs: Definitions::default(),
            server_info: Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
            instructions: None,
            page_size: 100,
            list_cache: CachePolicy::default(),
            discover_cache: CachePolicy::default(),
            read_cache: CachePolicy::new(0, crate::protocol::CacheScope::Public),
            logging: true,
            advertise: Advertised {
                tools: false,
                prompts: false,
                resources: false,
                tasks: false,
                skills: false,
            },
            event_buffer: 32,
            state_keys: None,
            state_ttl: DEFAULT_STATE_TTL,
            notifier: None,
            replay: None,
            listen_limits: ListenLimits::default(),
            states: States::default(),
            legacy: true,
            session_store: None,
            session_ttl: DEFAULT_SESSION_TTL,
            session_idle: None,
            legacy_input_timeout: DEFAULT_INPUT_TIMEOUT,
            task_store: None,
            task_settings: crate::tasks::TaskSettings::default(),
            tool_timeout: None,
            idempotency_store: None,
            event_store: None,
            resumable_get_streams: false,
            idempotency: crate::server::IdempotencySettings::default(),
        }
    }

    /// Sets `serverInfo`, sent in every result's `_meta`.
    pub fn server_info(mut self, info: Implementation) -> Self {
        self.server_info = info;
        self
    }

    /// Sets the `instructions` of `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Registers a tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.defs.tools.push(tool);
        self
    }

    /// Registers a fixed resource.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.defs.resources.push(resource);
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: ResourceTemplateDef) -> Self {
        self.defs.templates.push(template);
        self
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.defs.prompts.push(prompt);
        self
    }

    /// Registers a skill (Skills extension, see [`crate::skills`]): its entry is served by
    /// `skills/list` and `skills/get`, its files as resources; the server advertises the
    /// extension and the `resources` capability.
    pub fn skill(mut self, skill: crate::skills::SkillDef) -> Self {
        self.defs.skills.push(skill);
        self
    }

    /// Registers every skill in the directories directly under `dir` that hold a
    /// `SKILL.md` (see [`skills::from_dir`](crate::skills::from_dir)). A directory that
    /// cannot be read fails [`build`](Self::build).
    pub fn skills_dir(mut self, dir: impl AsRef<std::path::Path>) -> Self {
        match crate::skills::from_dir(dir) {
            Ok(skills) => self.defs.skills.extend(skills),
            Err(e) => {
                self.defs.unreadable.get_or_insert(e);
            }
        }
        self
    }

    /// Sets the completion handler (advertises the `completions` capability): an async
    /// `Fn(RequestContext, CompleteRequest)`, or `Fn(RequestContext, State<S>,
    /// CompleteRequest)` (see [`Handler`]).
    ///
    /// ```
    /// use stateless_mcp::protocol::{CompleteRequest, CompleteResult};
    /// use stateless_mcp::{RequestContext, Server};
    ///
    /// let server = Server::builder()
    ///     .completion(|_ctx: RequestContext, req: CompleteRequest| async move {
    ///         let colours = ["red", "green", "blue"];
    ///         let prefix = req.argument.value.clone();
    ///         Ok(CompleteResult::from_values(
    ///             colours.iter().filter(|c| c.starts_with(&prefix)).map(|c| c.to_string()).collect(),
    ///         ))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn completion<M, H>(mut self, handler: H) -> Self
    where
        M: 'static,
        H: Handler<M, (CompleteRequest,), Output = Result<CompleteResult, HandlerError>>,
    {
        self.defs.completion_state = H::state_type();
        self.defs.completion = Some(Arc::new(CompletionFn(handler, PhantomData)));
        self
    }

    /// Sets a completion handler implementing [`CompletionHandler`] directly.
    pub fn completion_handler(mut self, handler: impl CompletionHandler) -> Self {
        self.defs.completion_state = None;
        self.defs.completion = Some(Arc::new(handler));
        self
    }

    /// Registers application state: every handler that takes a [`State<T>`](crate::State)
    /// parameter receives a clone of `value` (one value per type; a later one replaces an
    /// earlier). [`ServerBuilder::build`] fails when a handler takes a state type nobody
    /// registered.
    ///
    /// ```
    /// use stateless_mcp::{HandlerError, RequestContext, Server, State, ToolDef};
    ///
    /// #[derive(Clone)]
    /// struct Config { greeting: String }
    ///
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct NoArgs {}
    /// let server = Server::builder()
    ///     .state(Config { greeting: "hello".into() })
    ///     .tool(ToolDef::new("greet").handler(
    ///         |_ctx: RequestContext, State(c): State<Config>, _: NoArgs| async move {
    ///             Ok::<_, HandlerError>(c.greeting)
    ///         },
    ///     ))
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(value);
        self
    }

    /// Items per page of the list methods (at least 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// `ttlMs`/`cacheScope` of the four list results.
    pub fn list_cache(mut self, policy: CachePolicy) -> Self {
        self.list_cache = policy;
        self
    }

    /// `ttlMs`/`cacheScope` of `server/discover`.
    pub fn discover_cache(mut self, policy: CachePolicy) -> Self {
        self.discover_cache = policy;
        self
    }

    /// Default `ttlMs`/`cacheScope` of `resources/read` results.
    pub fn read_cache(mut self, policy: CachePolicy) -> Self {
        self.read_cache = policy;
        self
    }

    /// Whether to advertise the (deprecated) `logging` capability. Handlers' log messages
    /// are sent only to requests that set a log level, and only when this is on.
    pub fn logging(mut self, on: bool) -> Self {
        self.logging = on;
        self
    }

    /// Advertises the `tools` capability even when no tool is registered at build time, so
    /// that tools can be added at runtime ([`Server::catalog`]). A server built with tools
    /// advertises it anyway.
    pub fn advertise_tools(mut self) -> Self {
        self.advertise.tools = true;
        self
    }

    /// Advertises the `prompts` capability even without prompts at build time (see
    /// [`advertise_tools`](Self::advertise_tools)).
    pub fn advertise_prompts(mut self) -> Self {
        self.advertise.prompts = true;
        self
    }

    /// Advertises the `resources` capability even without resources or templates at build
    /// time (see [`advertise_tools`](Self::advertise_tools)).
    pub fn advertise_resources(mut self) -> Self {
        self.advertise.resources = true;
        self
    }

    /// Advertises the Skills extension (and the `resources` capability, where its files
    /// are) even without skills, so that skills may be added at runtime (see
    /// [`advertise_tools`](Self::advertise_tools)).
    pub fn advertise_skills(mut self) -> Self {
        self.advertise.skills = true;
        self
    }

    /// How many notifications a handler may queue on a slow stream before it waits.
    pub fn event_buffer(mut self, n: usize) -> Self {
        self.event_buffer = n.max(1);
        self
    }

    /// The key ring that seals `requestState` and legacy session ids. Every replica must
    /// have the same ring. Without one, a server on an in-process bus generates a key of its
    /// own and warns (its states then open only in this process); a server on a shared bus
    /// (Redis, NATS: it is one replica of several) is refused by [`build`](Self::build).
    /// [`Settings::from_env`](crate::settings::Settings) reads it from `MCP_STATE_KEYS`.
    pub fn state_keys(mut self, keys: StateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// The notifier (and so the bus) listen streams are fed from. Default: a new in-process
    /// one, reachable through [`Server::notifier`].
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Where single-use `requestState` ids are claimed (see [`ReplayStore`](crate::extend::ReplayStore)). Default: a
    /// [`MemoryReplayStore`](crate::backends::replay::MemoryReplayStore), which protects one replica
    /// only; several replicas need a shared store such as
    /// [`RedisReplayStore`](crate::backends::replay::RedisReplayStore).
    pub fn replay_store(mut self, store: Arc<dyn crate::backends::replay::ReplayStore>) -> Self {
        self.replay = Some(store);
        self
    }

    /// Where tasks live (see [`crate::tasks`]). Default: a
    /// [`MemoryTaskStore`](crate::tasks::MemoryTaskStore), which one replica alone sees;
    /// several replicas need a shared store such as
    /// [`RedisTaskStore`](crate::tasks::RedisTaskStore).
    pub fn task_store(mut self, store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Where idempotent tool calls ([`ToolDef::idempotency_keys`]) keep their keys and first
    /// results (see [`IdempotencyStore`](crate::extend::IdempotencyStore)). Default: a
    /// [`MemoryIdempotencyStore`](crate::backends::MemoryIdempotencyStore), which one replica
    /// alone sees; several replicas need a shared store such as
    /// [`RedisIdempotencyStore`](crate::backends::RedisIdempotencyStore).
    pub fn idempotency_store(
        mut self,
        store: Arc<dyn crate::backends::idempotency::IdempotencyStore>,
    ) -> Self {
        self.idempotency_store = Some(store);
        self
    }

    /// Where the events of resumable 2025-11-25 streams are kept, so a client whose POST
    /// stream was cut resumes it with `Last-Event-ID` (see
    /// [`EventStore`](crate::extend::EventStore)). Default: a
    /// [`MemoryEventStore`](crate::backends::MemoryEventStore), which one replica alone sees;
    /// several replicas need a shared store such as
    /// [`RedisEventStore`](crate::backends::RedisEventStore).
    pub fn event_store(mut self, store: Arc<dyn crate::backends::events::EventStore>) -> Self {
        self.event_store = Some(store);
        self
    }

    /// Keeps 2025-11-25 sessions' GET streams in the [event store](Self::event_store) too, so a
    /// client that lost its GET stream resumes it with `Last-Event-ID` on any replica: the
    /// notifications the lost connection carried after that id, then every list announced as
    /// changed and every subscribed resource as updated (what was announced while no stream
    /// was open was never stored), then the live stream. Off by default: it costs one store
    /// write per notification per open GET stream. POST streams are resumable either way.
    pub fn resumable_get_streams(mut self, on: bool) -> Self {
        self.resumable_get_streams = on;
        self
    }

    /// How idempotent tool calls keep their results: how long, how big, how long a duplicate
    /// waits (see [`IdempotencySettings`](crate::settings::IdempotencySettings)).
    pub fn idempotency(mut self, settings: crate::server::IdempotencySettings) -> Self {
        self.idempotency = settings;
        self
    }

    /// How tasks run: lease, retention, polling hint, limits.
    pub fn task_settings(mut self, settings: crate::tasks::TaskSettings) -> Self {
        self.task_settings = settings;
        self
    }

    /// Limits on `subscriptions/listen` streams.
    pub fn listen_limits(mut self, limits: ListenLimits) -> Self {
        self.listen_limits = limits;
        self
    }

    /// Whether legacy (2025-11-25) clients are served on the same endpoint (default: on):
    /// `initialize`, sealed `Mcp-Session-Id`s, GET streams, DELETE, server-to-client
    /// requests. Off, every request takes the 2026-07-28 path (`initialize` gets `-32601`).
    pub fn legacy(mut self, on: bool) -> Self {
        self.legacy = on;
        self
    }

    /// Where legacy sessions' settings and revocations are kept (see [`SessionStore`](crate::extend::SessionStore)).
    /// Default: a [`MemorySessionStore`](crate::backends::MemorySessionStore), which serves
    /// one replica only; several replicas need a shared store such as
    /// [`RedisSessionStore`](crate::backends::RedisSessionStore).
    pub fn session_store(mut self, store: Arc<dyn crate::legacy::store::SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// How long a legacy session lasts from `initialize` at most, however much it is used
    /// (the hard limit, default 24 hours); after that its id gets 404 and the client
    /// initializes again.
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.session_ttl = ttl;
        self
    }

    /// The idle limit of legacy sessions (sliding expiry; default: none, only the hard limit
    /// [`session_ttl`](Self::session_ttl)): a session no request used for longer than
    /// `idle` ends (its id gets 404), one in use lives on up to the hard limit. Use is
    /// recorded in the session store on any replica, cheaply: a write only when less than
    /// half of `idle` is left (at most about two writes per session per `idle`), never one
    /// per request. `Duration::ZERO` turns it off.
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = (!idle.is_zero()).then_some(idle);
        self
    }

    /// How long a legacy client's `tools/call` waits for the answer to a server-to-client
    /// request (elicitation, sampling, roots) before it fails (default 5 minutes).
    pub fn legacy_input_timeout(mut self, timeout: Duration) -> Self {
        self.legacy_input_timeout = timeout;
        self
    }

    /// How long one tool call may take unless the tool sets its own
    /// [`ToolDef::timeout`] (default: no limit). Task-capable tools
    /// ([`ToolDef::task_support`]) are not limited by this default, only by their own. A call
    /// that runs out of time is answered with a tool result with `isError: true` saying so,
    /// and its handler is cancelled (its future dropped). Tools added at runtime
    /// ([`Server::catalog`]) get the same default.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Checks every definition and freezes the server.
    ///
    /// Fails when a definition is invalid, when a handler takes a state nobody registered,
    /// when the server joins a shared bus without a [key ring](Self::state_keys), and when
    /// the task store publishes status changes on another bus than the server's
    /// ([`TaskStore::announces_on`](crate::tasks::TaskStore::announces_on)).
    pub fn build(self) -> Result<Server, Error> {
        if self.state_keys.is_none() && self.notifier.as_ref().is_some_and(|n| n.is_shared()) {
            return Err(Error::invalid_definition(
                "this server joins a notification bus shared with other replicas, but has no \
                 requestState key ring: it would seal with a key generated for this process, \
                 which no other replica can open (multi-round-trip retries and legacy sessions \
                 landing on another replica would fail). Give every replica the same keys: \
                 ServerBuilder::state_keys, or the MCP_STATE_KEYS variable that \
                 settings::Settings::from_env (and the reference server's --state-keys) reads",
            ));
        }
        if let Some(route) = self.task_store.as_ref().and_then(|s| s.announces_on()) {
            let bus = self.notifier.as_ref().and_then(|n| n.route());
            if bus != Some(route) {
                return Err(Error::invalid_definition(format!(
                    "the task store publishes task status changes on `{route}` itself \
                     (RedisTaskStore::announcing_on), but this server's notifier publishes on {}: \
                     listen streams and the replicas running tasks would never hear them. Give \
                     the server that same bus: ServerBuilder::notifier(Notifier::new(Arc::new(bus)))",
                    bus.map_or_else(|| "an in-process bus".to_owned(), |b| format!("`{b}`"))
                )));
            }
        }
        let registry = Registry::build(self.defs, &self.states, self.tool_timeout)?;
        let skills = self.advertise.skills || !registry.skills.is_empty();
        let advertised = Advertised {
            tools: self.advertise.tools || !registry.tools.is_empty(),
            prompts: self.advertise.prompts || !registry.prompts.is_empty(),
            resources: self.advertise.resources || registry.has_resources() || skills,
            tasks: registry.task_tool().is_some(),
            skills,
        };
        let server_info = Arc::new(self.server_info);
        let result_meta = ResultMeta {
            server_info: Some(server_info.clone()),
            extra: JsonObject::new(),
        };
        let capabilities = ServerCapabilities {
            tools: advertised.tools.then(list_changed),
            resources: advertised.resources.then_some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
            }),
            prompts: advertised.prompts.then(list_changed),
            completions: registry.completion.is_some().then(JsonObject::new),
            logging: self.logging.then(JsonObject::new),
            extensions: extensions(&advertised),
            ..Default::default()
        };
        let supported_versions = vec![LATEST_PROTOCOL_VERSION];
        let notifier = self.notifier.unwrap_or_default();
        let mut wings = Wings::default();
        if self.legacy {
            let settings = crate::legacy::Settings {
                store: self.session_store.unwrap_or_else(|| {
                    Arc::new(crate::legacy::store::MemorySessionStore::default())
                }),
                session_ttl: self.session_ttl,
                session_idle: self.session_idle,
                events: self.event_store.clone().unwrap_or_else(|| {
                    Arc::new(crate::backends::events::MemoryEventStore::default())
                }),
                resumable_get: self.resumable_get_streams,
                input_timeout: self.legacy_input_timeout,
                capabilities: capabilities.clone(),
                instructions: self.instructions.clone(),
            };
            wings = wings.with(crate::legacy::State::new(settings, &notifier));
        }
        let mut discover = DiscoverResult::new(
            supported_versions.iter().map(|v| v.to_string()).collect(),
            capabilities,
            self.discover_cache,
        );
        discover.instructions = self.instructions;
        discover.meta = result_meta.clone();
        let discover =
            reply::Encoded::new(serde_json::to_vec(&discover).map_err(Error::internal_from)?);
        let observer = crate::observability::RequestObserver::new(
            registry.tools.iter().map(|t| t.tool.name.as_str()),
            registry.prompts.iter().map(|p| p.prompt.name.as_str()),
        );
        let settings = ListSettings {
            page_size: self.page_size,
            cache: self.list_cache,
            meta: result_meta.clone(),
        };
        let first = Snapshot::first(registry, &settings);
        let listeners = Listeners::new(self.listen_limits, first.fingerprints.clone());
        let states = Arc::new(self.states);
        let followers = Followers {
            fingerprints: listeners.fingerprints(),
            observer: observer.clone(),
            states: states.clone(),
            notifier: notifier.clone(),
        };
        let catalog = Arc::new(Serving::new(
            first,
            settings,
            advertised,
            self.tool_timeout,
            followers,
        ));
        Ok(Server::from_inner(Inner {
            catalog,
            discover,
            supported_versions,
            result_meta,
            read_cache: self.read_cache,
            stamp: reply::Stamp::new(server_info.clone()),
            server_info,
            event_buffer: self.event_buffer,
            sealer: mrtr::Sealer::new(
                self.state_keys.unwrap_or_else(|| {
                    tracing::warn!(
                        "no requestState keys configured: generated one for this process; \
                         several replicas need a shared key ring (ServerBuilder::state_keys, \
                         or MCP_STATE_KEYS through settings::Settings::from_env)"
                    );
                    StateKeys::generate()
                }),
                self.state_ttl,
                self.replay.unwrap_or_else(|| {
                    Arc::new(crate::backends::replay::MemoryReplayStore::default())
                }),
            ),
            notifier,
            listeners,
            states,
            wings,
            observer,
            tasks: Arc::new(crate::tasks::Tasks::new(
                self.task_store
                    .unwrap_or_else(|| Arc::new(crate::tasks::MemoryTaskStore::default())),
                self.task_settings,
            )),
            idempotency: crate::server::idempotency::Idempotency::new(
                self.idempotency_store.unwrap_or_else(|| {
                    Arc::new(crate::backends::idempotency::MemoryIdempotencyStore::default())
                }),
                self.idempotency,
            ),
        }))
    }
}

impl Server {
    /// Starts building a server.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }
}

/// The extensions `advertised` offers, each with no settings (`{}`); `None` without any.
fn extensions(advertised: &Advertised) -> Option<JsonObject> {
    let offered = [
        (advertised.tasks, crate::protocol::TASKS_EXTENSION),
        (advertised.skills, crate::protocol::SKILLS_EXTENSION),
    ];
    let e: JsonObject = offered
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, id)| (id.to_owned(), serde_json::Value::Object(JsonObject::new())))
        .collect();
    (!e.is_empty()).then_some(e)
}

/// `{"listChanged": true}`: listen streams deliver list changes announced through the
/// notifier.
fn list_changed() -> ListChangedCapability {
    ListChangedCapability {
        list_changed: Some(true),
    }
}

//! # stateless-mcp
//!
//! A framework for [MCP](https://modelcontextprotocol.io) servers that speak the
//! **2026-07-28 stateless revision** over **Streamable HTTP**, built to run as any number of
//! identical replicas behind an ordinary load balancer.
//!
//! Every request is self-describing: its `params._meta` carries the protocol version and the
//! client's capabilities, and no replica remembers a client. There is one POST endpoint; a
//! request is answered with one JSON object, or with an SSE stream scoped to that request
//! when its handler reports progress or log messages.
//!
//! ## Quick start
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use stateless_mcp::{HandlerError, RequestContext, Runner, Server, ToolDef};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Echo {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder()
//!         .tool(
//!             ToolDef::new("echo")
//!                 .description("Returns its input")
//!                 .handler(|_ctx: RequestContext, args: Echo| async move {
//!                     Ok::<_, HandlerError>(args.text)
//!                 }),
//!         )
//!         .build()?;
//!     // The endpoint at /mcp next to your own routes, TCP_NODELAY, HTTP/1.1 and h2c,
//!     // /healthz and /readyz, and a graceful drain on SIGTERM.
//!     Runner::new(server)
//!         .listen(([127, 0, 0, 1], 8080))
//!         .routes(axum::Router::new().route("/hello", axum::routing::get(|| async { "hi" })))
//!         .serve()
//!         .await?;
//!     Ok(())
//! }
//! ```
//!
//! ## Architecture
//!
//! Layers point one way (checked in CI: no file imports another in a circle). The core
//! (`server`) knows nothing of the 2025-11-25 era or of the Tasks extension: those are
//! wings that hold a [`Server`] and call it.
//!
//! | module | what it is |
//! |---|---|
//! | [`protocol`] | serde types for every server-side message; wire errors ([`protocol::ErrorObject`]). No tokio, axum or HTTP. |
//! | [`handler`] | small traits for tools, resources (and RFC 6570 templates), prompts and completions; typed tool arguments whose JSON Schema is generated (schemars) and validated (jsonschema); the registry, checked at build time and by every runtime change. |
//! | `server` (private; [`Server`]) | the core: the validation ladder, capability gating, the catalog (pre-encoded list pages swapped whole), self-contained cursors, the handler runner (panic isolation, progress and log notifications), sealed `requestState`, `subscriptions/listen` streams, and the one place every request is observed. A handler's request for input goes through one seam whose strategy the era picks. |
//! | `legacy` (private wing) | 2025-11-25 clients on the same endpoint: sealed session ids and their shared store, `initialize`, GET/DELETE streams, server-to-client requests whose answers reach the replica holding the stream over the bus, the stdio session. |
//! | [`skills`] | the Skills extension: skills (a `SKILL.md` and its files) registered from values or a directory, listed and fetched (`skills/list`, `skills/get`), their files served as resources. |
//! | [`tasks`] | the Tasks extension (a wing): tasks run under leases on any replica, the [`tasks::TaskStore`] contract and its settings. |
//! | [`backends`] | every bus and store in one place: in memory, and (features `redis`, `nats`) Redis and NATS. |
//! | [`notify`] | the [`notify::Notifier`] handle that announces changes, and the events it carries over a bus. |
//! | [`catalog`] | changing what a server serves at runtime ([`Server::catalog`]). |
//! | [`settings`] | the key ring ([`settings::StateKeys`]) and the limits deployments tune. |
//! | [`transport::http`] | the axum side: one POST route, `Host`/`Origin` allowlists, `Accept`/`Content-Type` negotiation, body limit, mirrored-header extraction, JSON or SSE replies. [`transport::stdio`]: newline-delimited JSON-RPC over pipes. |
//! | [`Runner`] | serving in production: TCP_NODELAY, HTTP/1.1 and h2c, your own routes, `/healthz` `/readyz` `/metrics`, list announcement, graceful drain. |
//! | [`observability`] | request spans named after the OpenTelemetry MCP conventions, the list of metric names, the Prometheus exporter, `/healthz` and `/readyz` with a [`observability::Readiness`] handle. |
//! | [`extend`] | for those who write a transport, a bus or a store: what [`Server::handle`] returns, the bus and store traits, the handler traits. |
//! | `app` (feature `reference-server`, not library API) | the reference server's composition root: configuration (flags, env, TOML file) → server builder → [`Runner`]. |
//! | `auth` | (feature `auth`) an OAuth 2.1 resource server as tower layers: bearer JWTs via JWKS, introspection, RFC 9728 metadata, `WWW-Authenticate` challenges, scopes. |
//! | `testing` | (feature `testing`) an in-process client over [`Server::handle`] for your own tests: discover, lists, typed tool calls, reads, prompts, completion, `input_required` rounds, listen streams. |
//! | `fixtures` (feature `reference-server`, not library API) | the demo toolset and every fixture the official conformance suite calls. |
//!
//! The validation ladder, in order: `Host`/`Origin` → 403; method ≠ POST → 405; `Accept` →
//! 406; `Content-Type` → 415; body limit → 413; JSON → `-32700`; one JSON-RPC object →
//! `-32600`; notification → 202; `_meta` → `-32602`; `MCP-Protocol-Version` = body →
//! `-32020`; version supported → `-32022`; `Mcp-Method`/`Mcp-Name` → `-32020`; method known
//! and advertised → `-32601` (404); params → `-32602`; `Mcp-Param-*` → `-32020`; client
//! capability → `-32021`; run. Every error echoes the request id when it could be read, and
//! omits `id` when it could not.
//!
//! ## Multi-round-trip requests and change notifications
//!
//! A tool, resource or prompt handler that needs input from the client answers
//! [`InputRequired`] (elicitation, sampling, roots, and/or state for the retry); the retry,
//! possibly on another replica, reads the answers and the state back through
//! [`RequestContext::input`]. The state is sealed (XChaCha20-Poly1305, a shared key ring,
//! [`settings::StateKeys`]) and bound to the caller, method, params and an expiry. Changes announced
//! through the [`notify::Notifier`] reach every open `subscriptions/listen` stream, on every
//! replica sharing the bus; a state marked single-use
//! ([`InputRequired::single_use`]) is claimed in a [`extend::ReplayStore`] so it runs once.
//!
//! ## Legacy clients
//!
//! 2025-11-25 clients (`initialize`, `Mcp-Session-Id`, GET streams, server-to-client
//! requests) are served on the same endpoint by any replica ([`ServerBuilder::legacy`], on by
//! default): a request is classified before the 2026 ladder; the session id is a token sealed
//! with the same [`settings::StateKeys`] for its own purpose; what changes during a session lives in a
//! [`extend::SessionStore`]; an `InputRequired` becomes server-to-client requests whose
//! answers reach the replica holding the stream over the bus.
//!
//! ## State and errors
//!
//! Register application state once ([`ServerBuilder::state`]) and take it, typed, as a
//! [`State<T>`] parameter in any handler (tools, resources, templates, prompts,
//! completion); a handler that takes a state nobody registered makes
//! [`ServerBuilder::build`] fail.
//!
//! Every handler kind returns the same [`HandlerError`]: `?` works on any error and on
//! `anyhow::Error`; an unexpected error is logged with its detail and the client sees a
//! generic message (a tool: an `isError` result; other methods: `-32603`);
//! [`HandlerError::new`] is a message meant for the model or user; protocol errors
//! ([`Error::invalid_params`], [`Error::resource_not_found`], …) are answered as the JSON-RPC
//! errors they stand for. The wire error ([`protocol::ErrorObject`]) and the Rust error
//! ([`Error`], an opaque value with an [`ErrorKind`]) are different types, converted in one
//! place (dispatch).
//!
//! ## Cargo features
//!
//! None is on by default: a server with the [`Runner`], the in-process bus and the in-memory
//! stores needs none (the README's feature table gives what each costs to build).
//!
//! | feature | adds |
//! |---|---|
//! | `auth` | the `auth` module (OAuth 2.1 resource server) and the reference server's `--auth-*` settings |
//! | `otel` | `observability::OtlpTraces`: OTLP (http/protobuf) export of the request spans, configured by the `OTEL_*` variables, as a `tracing-subscriber` layer; `observability::OtlpMetrics`: the same metrics as Prometheus's, pushed over OTLP |
//! | `prometheus` | `observability::PrometheusMetrics`: the Prometheus exporter and its `/metrics` route |
//! | `redis` | `backends::RedisBus` (Redis pub/sub bus), `backends::RedisReplayStore`, `backends::RedisSessionStore` and `backends::RedisTaskStore`; `--bus redis://…` |
//! | `nats` | `backends::NatsBus` (NATS core pub/sub bus); `--bus nats://…` |
//! | `testing` | the `testing` module: an in-process client for your server's unit tests (no sockets), usually enabled in `[dev-dependencies]` |
//! | `reference-server` | the `stateless-mcp` binary (`cargo run --features reference-server`): its CLI, config file, log set-up and fixtures, with `auth`, `otel`, `prometheus` and `redis`; not library API, and the only feature that pulls in clap and toml |
//! | `external-tests` | nothing in the library: compiles the project's own integration tests that run installed programs (Node, Python, nginx, brokers); see the README's Testing section |
//!
//! Features only add. Scope declarations on definitions (`ToolDef::scopes` and the like) and
//! scope-filtered lists are always built, for any layer that puts a [`handler::Principal`] into the
//! request's extensions.

mod builder;
mod error;
mod mirrored;

// The reference server's composition root and fixtures: for the `stateless-mcp` binary,
// its tests and benches (feature `reference-server`), and behind `settings::Settings`
// (feature `config`); not library API.
#[cfg(feature = "config")]
#[doc(hidden)]
pub mod app;
#[cfg(feature = "auth")]
pub mod auth;
pub mod backends;
pub mod catalog;
pub mod extend;
#[cfg(any(feature = "reference-server", feature = "fuzzing"))]
#[doc(hidden)]
pub mod fixtures;
// The user guide's snippets, compiled as doc tests (docs/*.md).
#[cfg(doctest)]
pub mod guide;
pub mod handler;
mod legacy;
pub mod notify;
pub mod observability;
pub mod protocol;
mod runner;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod server;
pub mod settings;
pub mod skills;
pub mod tasks;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transport;

pub use builder::ServerBuilder;
pub use error::{Error, ErrorKind};
pub use handler::{
    HandlerError, Input, InputRequired, PromptDef, RequestContext, ResourceDef,
    ResourceTemplateDef, State, ToolDef,
};
pub use runner::Runner;
pub use server::Server;
pub use transport::http::StreamableHttp;

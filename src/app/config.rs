//! The reference server's settings: every one a flag with an `MCP_` environment twin, and a
//! key of the optional TOML config file (`--config`).
//!
//! Precedence: flag, then environment variable, then config file, then default. A setting
//! that holds a secret carries `hide_env_values = true`: `--help` does not show its
//! environment value and the effective configuration logged at start-up redacts it (see
//! [`Config::effective`]). Mark every new secret setting that way.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::server::StateKeys;

/// Which fixtures the reference server registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fixtures {
    /// The demo toolset only.
    None,
    /// The demo toolset plus every fixture the official conformance suite calls by name.
    Conformance,
}

/// What a broker-backed bus's outage does to `/readyz` (`--bus-readiness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BusReadiness {
    /// The replica is not ready (503) while the bus is down.
    Required,
    /// `/readyz` stays 200 and lists the bus under `degraded` while it is down.
    Report,
}

/// Whether the resource server takes DPoP-bound tokens (`--auth-dpop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DpopPolicy {
    /// Bearer tokens only.
    Off,
    /// DPoP-bound tokens with their proofs, and bearer tokens not bound to a key.
    Accept,
    /// DPoP-bound tokens only.
    Require,
}

/// How the reference server talks to its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// Streamable HTTP on `--listen`, with the health and metrics routes.
    Http,
    /// Newline-delimited JSON-RPC on stdin and stdout, for a host that starts the server as
    /// a subprocess; stdout carries nothing but JSON-RPC, logs go to stderr.
    Stdio,
}

/// Format of the log lines written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, with the fields of the current spans.
    Json,
}

/// What `--help` says above the settings: for whoever runs the server (the struct's doc
/// comment below is for developers and stays out of it).
const OPERATOR_HELP: &str = "\
A stateless MCP server (protocol 2026-07-28, and 2025-11-25 clients on the same endpoint) over \
Streamable HTTP or stdio. Run as many identical replicas as you need behind any load balancer: \
no replica remembers a client. Several replicas share --state-keys and a broker-backed --bus.

Every setting is a flag, an MCP_* environment variable (shown in brackets) and a key of the \
optional TOML file given with --config (the name with underscores, e.g. page_size = 50). A flag \
beats its environment variable, which beats the file, which beats the default. Settings are \
checked at start-up: a bad one stops the server with a message naming it. Secret settings never \
show their values here or in the logs.

Probes: /healthz and /readyz, metrics: /metrics (on --admin-listen when set). SIGTERM drains \
gracefully. Reference: docs/operations.md.";

/// Settings of the `stateless-mcp` reference server.
///
/// Load it with [`Config::load`] (flags, environment, config file, validation). Its `Debug`
/// output shows secrets in clear: log [`Config::effective`] instead, which redacts them.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "stateless-mcp",
    version,
    about = "A stateless MCP (2026-07-28) server over Streamable HTTP",
    long_about = OPERATOR_HELP
)]
#[non_exhaustive]
pub struct Config {
    /// Transport: `http` (Streamable HTTP on `--listen`) or `stdio` (JSON-RPC lines on
    /// stdin/stdout, logs on stderr; the HTTP settings do not apply).
    #[arg(long, env = "MCP_TRANSPORT", value_enum, default_value = "http")]
    pub transport: Transport,

    /// Address to listen on.
    #[arg(long, env = "MCP_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Path of the MCP endpoint.
    #[arg(long, env = "MCP_PATH", default_value = "/mcp")]
    pub path: String,

    /// Largest accepted request body (with `--transport stdio`: line), in bytes.
    #[arg(long, env = "MCP_BODY_LIMIT", default_value_t = crate::transport::http::DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,

    /// Accepted Host names, comma-separated (`*` for any). Default: localhost forms when
    /// listening on loopback, any host otherwise.
    #[arg(long, env = "MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Accepted Origins, comma-separated: full origins or host names (`*` for any).
    /// Default: localhost forms. Requests without Origin are always accepted. Setting it
    /// also answers browsers' CORS requests (preflights, `Access-Control-*` headers) from
    /// exactly these origins.
    #[arg(long, env = "MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,

    /// Fixtures to register.
    #[arg(long, env = "MCP_FIXTURES", value_enum, default_value = "none")]
    pub fixtures: Fixtures,

    /// Items per page of list results.
    #[arg(long, env = "MCP_PAGE_SIZE", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub page_size: u64,

    /// `ttlMs` of list and discover results.
    #[arg(long, env = "MCP_LIST_TTL_MS", default_value_t = 60_000)]
    pub list_ttl_ms: u64,

    /// Seconds between SSE keepalive comments.
    #[arg(long, env = "MCP_KEEPALIVE_SECS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub keepalive_secs: u64,

    /// How long a sealed `requestState` stays valid, in seconds.
    #[arg(long, env = "MCP_STATE_TTL_SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub state_ttl_secs: u64,

    /// Connections held at once; more are answered 503 (`Retry-After: 1`) and closed.
    #[arg(long, env = "MCP_MAX_CONNECTIONS", default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_connections: u64,

    /// Largest request line plus headers, in bytes (431 above; at least 8192).
    #[arg(long, env = "MCP_MAX_HEADER_BYTES", default_value_t = 32_768, value_parser = clap::value_parser!(u64).range(8192..=16_777_216))]
    pub max_header_bytes: u64,

    /// Seconds an HTTP/1.1 request's line and headers may take to arrive (slowloris): the
    /// connection is closed after that.
    #[arg(long, env = "MCP_HEADER_TIMEOUT_SECS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_secs: u64,

    /// Seconds a request body may take to arrive once its headers did (408 after that).
    #[arg(long, env = "MCP_BODY_TIMEOUT_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout_secs: u64,

    /// Seconds a connection with nothing in flight stays open (keep it above your load
    /// balancer's idle timeout for upstream connections, 60 s for nginx).
    #[arg(long, env = "MCP_IDLE_TIMEOUT_SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub idle_timeout_secs: u64,

    /// Requests answered at once per replica (listen streams not counted); more get 503
    /// with `Retry-After: 1`. 0: unbounded. With `--transport stdio`: handlers run at once;
    /// as many more requests may wait, then stdin is not read until one finishes.
    #[arg(long, env = "MCP_MAX_IN_FLIGHT", default_value_t = crate::transport::http::DEFAULT_MAX_IN_FLIGHT as u64)]
    pub max_in_flight: u64,

    /// Requests per second each caller may make on average (the verified principal, or
    /// the client address): more get 429 with `Retry-After`. Default: no limit.
    #[arg(long, env = "MCP_RATE_LIMIT", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: Option<u32>,

    /// Burst size of the rate limit. Default: the rate itself (one second's worth).
    #[arg(long, env = "MCP_RATE_LIMIT_BURST", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_burst: Option<u32>,

    /// Header whose last entry is the client address, for rate-limiting callers without a
    /// principal behind a proxy (e.g. `x-forwarded-for`, set by the shipped nginx). Default:
    /// the peer address.
    #[arg(long, env = "MCP_RATE_LIMIT_HEADER", value_parser = parse_header_name)]
    pub rate_limit_header: Option<String>,

    /// Where rate budgets are kept: `memory` (each replica keeps its own, so N replicas allow
    /// N times the budget) or `redis://HOST:PORT[/DB]` (one budget across every replica
    /// sharing it, one Lua script per check; while it cannot be reached each replica falls
    /// back to its own budgets, counted in `mcp_rate_limit_fallbacks_total`).
    #[arg(long, env = "MCP_RATE_LIMIT_STORE", default_value = "memory", value_parser = parse_store, hide_env_values = true)]
    pub rate_limit_store: String,

    /// Budgets per caller for single tools, `NAME=RATE[/BURST]` comma-separated (e.g.
    /// `search=2/5`): a caller's `tools/call`s of NAME, charged besides `--rate-limit`
    /// (which they need). In the config file: `rate_limit_tools = ["search=2/5"]`.
    #[arg(long, env = "MCP_RATE_LIMIT_TOOLS", value_delimiter = ',', value_parser = parse_tool_limit)]
    pub rate_limit_tools: Vec<String>,

    /// Open `subscriptions/listen` streams per replica beyond which new ones get 503.
    #[arg(long, env = "MCP_MAX_LISTEN_STREAMS", default_value_t = 10_000)]
    pub max_listen_streams: usize,

    /// Close each listen stream gracefully after this many seconds (minus up to 10% jitter),
    /// so clients reconnect and spread over replicas. Default: no limit.
    #[arg(long, env = "MCP_LISTEN_MAX_LIFETIME_SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub listen_max_lifetime_secs: Option<u64>,

    /// Events a listen stream may fall behind before it is resynced (the bus ring size).
    #[arg(long, env = "MCP_BUS_CAPACITY", default_value_t = crate::backends::bus::DEFAULT_CAPACITY, value_parser = parse_capacity)]
    pub bus_capacity: usize,

    /// The notification bus that carries change events between replicas: `memory` (this
    /// process only), `redis://HOST:PORT[/DB]` (feature `redis`) or `nats://HOST:PORT`
    /// (feature `nats`). Every replica of one deployment needs the same bus.
    #[arg(long, env = "MCP_BUS", default_value = "memory", value_parser = parse_bus, hide_env_values = true)]
    pub bus: String,

    /// Prefix of the bus channel (Redis) or subject (NATS) names, so several deployments can
    /// share one broker: events go to `PREFIX.events`.
    #[arg(long, env = "MCP_BUS_PREFIX", default_value = "stateless-mcp", value_parser = parse_prefix)]
    pub bus_prefix: String,

    /// What a broker-backed bus's outage does to `/readyz`: `required` answers 503 while it
    /// is down; `report` stays 200 and lists it under `degraded`, so a broker every replica
    /// shares cannot take every replica out of the load balancer at once (calls, lists and
    /// MRTR keep working; listen streams miss other replicas' events until it is back).
    #[arg(
        long,
        env = "MCP_BUS_READINESS",
        value_enum,
        default_value = "required"
    )]
    pub bus_readiness: BusReadiness,

    /// Where single-use `requestState` ids are recorded: `memory` (this process) or
    /// `redis://HOST:PORT[/DB]` (shared by every replica). Default: the `--bus` Redis when
    /// the bus is Redis, otherwise `memory`.
    #[arg(long, env = "MCP_REPLAY_STORE", value_parser = parse_store, hide_env_values = true)]
    pub replay_store: Option<String>,

    /// Serve legacy (2025-11-25) clients on the same endpoint: `on` or `off`. Off, every
    /// request takes the 2026-07-28 path (`initialize` gets `-32601`, GET and DELETE 405).
    #[arg(long, env = "MCP_LEGACY", default_value = "on", value_parser = parse_switch, action = clap::ArgAction::Set)]
    pub legacy: bool,

    /// Where legacy sessions' settings (log level, subscriptions) and revocations are kept:
    /// `memory` (this process) or `redis://HOST:PORT[/DB]` (shared by every replica).
    /// Default: the `--bus` Redis when the bus is Redis, otherwise `memory`.
    #[arg(long, env = "MCP_SESSION_STORE", value_parser = parse_store, hide_env_values = true)]
    pub session_store: Option<String>,

    /// How long a legacy session lasts from `initialize` at most, however much it is used
    /// (the hard limit), in seconds; then its `Mcp-Session-Id` gets 404 and the client
    /// initializes again.
    #[arg(long, env = "MCP_SESSION_TTL_SECS", default_value_t = 86_400, value_parser = clap::value_parser!(u64).range(1..=30 * 86_400))]
    pub session_ttl_secs: u64,

    /// The idle limit of legacy sessions, in seconds (sliding expiry): a session no request
    /// used for this long gets 404; one in use lives on up to `--session-ttl-secs`. 0: no
    /// idle limit.
    #[arg(long, env = "MCP_SESSION_IDLE_SECS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=30 * 86_400))]
    pub session_idle_secs: u64,

    /// How long a legacy client's `tools/call` waits for the answer to a server-to-client
    /// request (elicitation, sampling, roots), in seconds, before it fails.
    #[arg(long, env = "MCP_LEGACY_INPUT_TIMEOUT_SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub legacy_input_timeout_secs: u64,

    /// Where tasks of the Tasks extension live: `memory` (this process) or
    /// `redis://HOST:PORT[/DB]` (shared by every replica, which any replica then follows,
    /// cancels and answers). Default: the `--bus` Redis when the bus is Redis, otherwise
    /// `memory`.
    #[arg(long, env = "MCP_TASK_STORE", value_parser = parse_store, hide_env_values = true)]
    pub task_store: Option<String>,

    /// Seconds a replica holds a running task without renewing its lease (it renews every
    /// third of it). When a replica dies, its running tasks become `failed` this long after
    /// its last renewal.
    #[arg(long, env = "MCP_TASK_LEASE_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub task_lease_secs: u64,

    /// Seconds a task stays readable after its last change (its `ttlMs`).
    #[arg(long, env = "MCP_TASK_TTL_SECS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=2_592_000))]
    pub task_ttl_secs: u64,

    /// Task handlers one replica runs at once; beyond it a task-capable call is refused
    /// (HTTP 503, `-32603`).
    #[arg(long, env = "MCP_TASK_MAX_RUNNING", default_value_t = 1000, value_parser = parse_capacity)]
    pub task_max_running: usize,

    /// The largest tool result a task keeps, in bytes; a bigger result fails the task.
    #[arg(long, env = "MCP_TASK_MAX_RESULT_BYTES", default_value_t = 1_048_576, value_parser = clap::value_parser!(u64).range(1..=67_108_864))]
    pub task_max_result_bytes: u64,

    /// Where idempotent tool calls keep their keys and first results: `memory` (this
    /// process) or `redis://HOST:PORT[/DB]` (shared by every replica, so a retry on any
    /// replica gets the first result). Default: the `--bus` Redis when the bus is Redis,
    /// otherwise `memory`.
    #[arg(long, env = "MCP_IDEMPOTENCY_STORE", value_parser = parse_store, hide_env_values = true)]
    pub idempotency_store: Option<String>,

    /// Where the events of resumable 2025-11-25 streams are kept (a client whose stream was
    /// cut resumes it with `Last-Event-ID`): `memory` (this process: it resumes on this
    /// replica only) or `redis://HOST:PORT[/DB]` (shared: it resumes on any replica).
    /// Default: the `--bus` Redis when the bus is Redis, otherwise `memory`.
    #[arg(long, env = "MCP_EVENT_STORE", value_parser = parse_store, hide_env_values = true)]
    pub event_store: Option<String>,

    /// Keep legacy sessions' GET streams in the event store too (`on` or `off`), so a client
    /// that lost its GET stream resumes it with `Last-Event-ID` on any replica (then hears
    /// every list changed and every subscribed resource updated, for what was announced while
    /// it had no stream). Costs one event-store write per notification per open GET stream.
    #[arg(long, env = "MCP_RESUMABLE_GET_STREAMS", default_value = "off", value_parser = parse_switch, action = clap::ArgAction::Set)]
    pub resumable_get_streams: bool,

    /// Seconds an idempotent tool call's first result is kept for retries.
    #[arg(long, env = "MCP_IDEMPOTENCY_KEEP_SECS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=2_592_000))]
    pub idempotency_keep_secs: u64,

    /// This replica's name, sent in the `x-mcp-replica` response header and in logs so you
    /// can see which replica answered. Default: `HOSTNAME-PID`.
    #[arg(long, env = "MCP_REPLICA_ID", value_parser = parse_replica_id)]
    pub replica_id: Option<String>,

    /// OAuth authorization server that issues tokens for this server. Turns authorization
    /// on (with `--resource`); its keys are found through its discovery document.
    #[arg(long, env = "MCP_AUTH_ISSUER")]
    pub auth_issuer: Option<String>,

    /// This server's canonical resource identifier (RFC 8707), e.g.
    /// `https://mcp.example.com/mcp`; tokens' audience must include it.
    #[arg(long, env = "MCP_RESOURCE")]
    pub resource: Option<String>,

    /// Scopes every request needs, comma-separated.
    #[arg(long, env = "MCP_AUTH_SCOPES", value_delimiter = ',')]
    pub auth_scopes: Vec<String>,

    /// JWKS URL, instead of the one in the issuer's discovery document.
    #[arg(long, env = "MCP_AUTH_JWKS_URI")]
    pub auth_jwks_uri: Option<String>,

    /// Client id for token introspection (RFC 7662); turns on opaque-token support.
    #[arg(long, env = "MCP_AUTH_INTROSPECTION_CLIENT_ID")]
    pub auth_introspection_client_id: Option<String>,

    /// Client secret for token introspection.
    #[arg(
        long,
        env = "MCP_AUTH_INTROSPECTION_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub auth_introspection_client_secret: Option<String>,

    /// Introspection endpoint, instead of the one in the issuer's discovery document.
    #[arg(long, env = "MCP_AUTH_INTROSPECTION_URL")]
    pub auth_introspection_url: Option<String>,

    /// Accept plain `http://` issuer, JWKS and introspection URLs on non-loopback hosts
    /// (default: `https://` only, except on loopback). Only where the network path to the
    /// authorization server is trusted: keys fetched in clear can be forged.
    #[arg(long, env = "MCP_AUTH_ALLOW_HTTP")]
    pub auth_allow_http: bool,

    /// DPoP (RFC 9449) sender-constrained tokens: `off` (bearer tokens only), `accept`
    /// (DPoP-bound tokens with their proofs, and bearer tokens that are not bound) or
    /// `require` (DPoP only). Proof `jti`s are claimed in the `--replay-store`.
    #[arg(long, env = "MCP_AUTH_DPOP", value_enum, default_value = "off")]
    pub auth_dpop: DpopPolicy,

    /// Require DPoP server nonces, each valid for this many seconds to twice as long, on
    /// every replica sharing `--state-keys`. Default: no nonces.
    #[arg(long, env = "MCP_AUTH_DPOP_NONCE_SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub auth_dpop_nonce_secs: Option<u64>,

    /// Clock leeway for token expiry checks, in seconds.
    #[arg(long, env = "MCP_AUTH_LEEWAY_SECS", default_value_t = 60)]
    pub auth_leeway_secs: u64,

    /// Log filter (tracing `EnvFilter` syntax), e.g. `info` or `stateless_mcp=debug`.
    #[arg(long, env = "MCP_LOG", default_value = "info")]
    pub log: String,

    /// Log line format on stderr: `text` or `json`.
    #[arg(long, env = "MCP_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Tools enabled and disabled at runtime on every replica: `PUT`/`DELETE
    /// /admin/tools/{name}` on the listener (names `runtime_upper`, `runtime_reverse`), the
    /// enabled set kept in the `--bus` Redis (`PREFIX.runtime-tools`). A demonstration of the
    /// runtime catalog; the admin route requires `--admin-token`.
    #[arg(long, env = "MCP_RUNTIME_TOOLS")]
    pub runtime_tools: bool,

    /// The bearer token the admin routes of `--runtime-tools` require
    /// (`Authorization: Bearer TOKEN`, at least 16 characters); without it `--runtime-tools`
    /// refuses to start.
    #[arg(long, env = "MCP_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,

    /// Separate address for `/metrics`, `/healthz` and `/readyz`. Default: served on
    /// `--listen` next to the MCP endpoint.
    #[arg(long, env = "MCP_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,

    /// Seconds between SIGTERM and closing the listener, while `/readyz` answers 503 so the
    /// load balancer stops sending new requests.
    #[arg(long, env = "MCP_DRAIN_DELAY_SECS", default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub drain_delay_secs: u64,

    /// Seconds in-flight requests get to finish once the listener is closed; then the
    /// process exits anyway.
    #[arg(long, env = "MCP_SHUTDOWN_TIMEOUT_SECS", default_value_t = 25, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub shutdown_timeout_secs: u64,

    /// Keys that seal `requestState`: `KID:BASE64KEY` (32-byte keys, base64), comma-separated,
    /// newest first; the first seals, all open. Every replica needs the same list. Default: a
    /// key generated at start-up, valid for this process only.
    #[arg(
        long,
        env = "MCP_STATE_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub state_keys: Vec<String>,

    /// TOML file of settings (keys are the flag names, e.g. `page_size = 50`); flags and
    /// environment variables override it.
    #[arg(long, env = "MCP_CONFIG")]
    pub config: Option<PathBuf>,

    /// Where each setting came from (filled by [`Config::load_from`]).
    #[arg(skip)]
    pub(crate) sources: super::effective::Sources,
}

fn parse_capacity(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err("must be an integer from 1 to 1000000".into()),
    }
}

/// The backend a `--bus`, `--replay-store` or `--task-store` value names: `memory`, or a URL's scheme
/// (`redis`, `rediss`, `nats`, `tls`); `None` for anything else.
pub(super) fn backend(value: &str) -> Option<&str> {
    match value.split_once("://") {
        Some((scheme, _)) => Some(scheme),
        None => (value == "memory").then_some(value),
    }
}

fn parse_bus(s: &str) -> Result<String, String> {
    match backend(s) {
        Some("memory" | "redis" | "rediss" | "nats" | "tls") => Ok(s.to_owned()),
        _ => Err("must be `memory`, `redis://HOST:PORT[/DB]` or `nats://HOST:PORT`".into()),
    }
}

fn parse_store(s: &str) -> Result<String, String> {
    match backend(s) {
        Some("memory" | "redis" | "rediss") => Ok(s.to_owned()),
        _ => Err("must be `memory` or `redis://HOST:PORT[/DB]`".into()),
    }
}

/// `NAME=RATE[/BURST]`.
fn parse_tool_limit(s: &str) -> Result<String, String> {
    tool_limit(s).map(|_| s.to_owned())
}

/// The tool name, rate and burst of a `--rate-limit-tools` entry.
pub(super) fn tool_limit(s: &str) -> Result<(String, u32, u32), String> {
    let bad = || format!("{s:?} must be NAME=RATE or NAME=RATE/BURST (positive integers)");
    let (name, budget) = s.trim().split_once('=').ok_or_else(bad)?;
    let (rate, burst) = match budget.split_once('/') {
        Some((r, b)) => (r, Some(b)),
        None => (budget, None),
    };
    let number = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(bad)
    };
    let rate = number(rate)?;
    let burst = burst.map(number).transpose()?.unwrap_or(rate);
    let name = name.trim();
    if name.is_empty() {
        return Err(bad());
    }
    Ok((name.to_owned(), rate, burst))
}

fn parse_switch(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err("must be `on` or `off`".into()),
    }
}

fn parse_prefix(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    ok.then(|| s.to_owned())
        .ok_or_else(|| "must be 1 to 64 characters of letters, digits, '-', '_' or '.'".into())
}

fn parse_header_name(s: &str) -> Result<String, String> {
    http::HeaderName::from_bytes(s.as_bytes())
        .map(|h| h.as_str().to_owned())
        .map_err(|_| "must be an HTTP header name".into())
}

fn parse_replica_id(s: &str) -> Result<String, String> {
    http::HeaderValue::from_str(s)
        .ok()
        .filter(|_| !s.is_empty() && s.len() <= 128)
        .map(|_| s.to_owned())
        .ok_or_else(|| "must be 1 to 128 visible ASCII characters".into())
}

impl Config {
    /// The connection limits of `--max-connections`, `--max-header-bytes`,
    /// `--header-timeout-secs` and `--idle-timeout-secs`.
    pub fn connection_limits(&self) -> crate::runner::ConnectionLimits {
        let secs = std::time::Duration::from_secs;
        crate::runner::ConnectionLimits::default()
            .max_connections(usize::try_from(self.max_connections).unwrap_or(usize::MAX))
            .max_header_bytes(usize::try_from(self.max_header_bytes).unwrap_or(usize::MAX))
            .header_timeout(secs(self.header_timeout_secs))
            .idle_timeout(secs(self.idle_timeout_secs))
    }

    /// The rate limit of `--rate-limit`, `--rate-limit-burst`, `--rate-limit-header` and
    /// `--rate-limit-tools` (its store, `--rate-limit-store`, is connected by the app).
    pub fn rate_limit(&self) -> Option<crate::transport::http::RateLimit> {
        use std::num::NonZeroU32;
        let rate = NonZeroU32::new(self.rate_limit?)?;
        let mut limit = crate::transport::http::RateLimit::per_second(rate);
        if let Some(burst) = self.rate_limit_burst.and_then(NonZeroU32::new) {
            limit = limit.burst(burst);
        }
        if let Some(h) = &self.rate_limit_header {
            if let Ok(name) = http::HeaderName::from_bytes(h.as_bytes()) {
                limit = limit.client_address_header(name);
            }
        }
        for entry in &self.rate_limit_tools {
            if let Ok((name, rate, burst)) = tool_limit(entry) {
                if let (Some(r), Some(b)) = (NonZeroU32::new(rate), NonZeroU32::new(burst)) {
                    limit = limit.tool(name, r, b);
                }
            }
        }
        Some(limit)
    }

    /// The `requestState` key ring from `--state-keys`, if any was given. Checked here, at
    /// start-up, rather than by the argument parser, whose messages would echo the secret.
    pub fn state_key_ring(&self) -> Result<Option<StateKeys>, crate::Error> {
        if self.state_keys.is_empty() {
            return Ok(None);
        }
        self.state_keys.join(",").parse().map(Some).map_err(|e| {
            crate::Error::invalid_definition(format!("--state-keys (MCP_STATE_KEYS): {e}"))
        })
    }

    /// This replica's name: `--replica-id`, or `HOSTNAME-PID`.
    pub fn replica_id(&self) -> String {
        self.replica_id.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .or_else(|| std::env::var("HOSTNAME").ok())
                .map(|h| h.trim().to_owned())
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "replica".to_owned());
            format!("{host}-{}", std::process::id())
        })
    }
}

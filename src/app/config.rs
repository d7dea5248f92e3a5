//! The reference server's settings: every one a flag with an `MCP_` environment twin.

use std::net::SocketAddr;

use clap::{Parser, ValueEnum};

/// Which fixtures the reference server registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fixtures {
    /// The demo toolset only.
    None,
    /// The demo toolset plus every fixture the official conformance suite calls by name.
    Conformance,
}

/// Settings of the `stateless-mcp` reference server.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "stateless-mcp",
    version,
    about = "A stateless MCP (2026-07-28) server over Streamable HTTP"
)]
#[non_exhaustive]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "MCP_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Path of the MCP endpoint.
    #[arg(long, env = "MCP_PATH", default_value = "/mcp")]
    pub path: String,

    /// Largest accepted request body, in bytes.
    #[arg(long, env = "MCP_BODY_LIMIT", default_value_t = crate::transport::http::DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,

    /// Accepted Host names, comma-separated (`*` for any). Default: localhost forms when
    /// listening on loopback, any host otherwise.
    #[arg(long, env = "MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Accepted Origins, comma-separated: full origins or host names (`*` for any).
    /// Default: localhost forms. Requests without Origin are always accepted.
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

    /// Log filter (tracing `EnvFilter` syntax), e.g. `info` or `stateless_mcp=debug`.
    #[arg(long, env = "MCP_LOG", default_value = "info")]
    pub log: String,
}

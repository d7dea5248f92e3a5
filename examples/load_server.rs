//! The reference server with 100 tools, for the `tools/list` case of the load benchmark
//! (`benches/load/`): no fixture set of `stateless-mcp` registers that many.
//!
//! Wired like `stateless_mcp::app::serve` (same flags through [`Config`], same server
//! settings as `app::build_server`, the demo toolset, the MCP router of `app::router`, the
//! health and Prometheus routes, TCP_NODELAY, `#[tokio::main]`), plus `tool_001` to
//! `tool_096` with a typed argument struct: 100 tools, one page at the default page size.
//! It has no graceful drain: the benchmark stops it with a signal.
//!
//! Run with `cargo run --release --example load_server -- --listen 127.0.0.1:8080`; it
//! prints `listening on ADDR` to stderr.

use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt as _;
use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::app::{self, Config};
use stateless_mcp::notify::{MemoryBus, Notifier};
use stateless_mcp::observability::{PrometheusMetrics, Readiness};
use stateless_mcp::protocol::{CachePolicy, CacheScope, Implementation};
use stateless_mcp::server::ListenLimits;
use stateless_mcp::{RequestContext, Server, ToolDef, ToolError, fixtures};

/// Tools added to the demo's four.
const GENERATED_TOOLS: usize = 96;

#[derive(Deserialize, JsonSchema)]
struct QueryArgs {
    /// What to look up.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
}

fn build(config: &Config) -> Result<Server, stateless_mcp::Error> {
    let policy = CachePolicy::new(config.list_ttl_ms, CacheScope::Public);
    let mut builder = Server::builder()
        .server_info(Implementation::new(
            "stateless-mcp",
            env!("CARGO_PKG_VERSION"),
        ))
        .page_size(usize::try_from(config.page_size).unwrap_or(usize::MAX))
        .list_cache(policy)
        .discover_cache(policy)
        .state_ttl(Duration::from_secs(config.state_ttl_secs))
        .notifier(Notifier::new(Arc::new(MemoryBus::new(config.bus_capacity))))
        .listen_limits(
            ListenLimits::default()
                .max_streams(config.max_listen_streams)
                .max_lifetime(config.listen_max_lifetime_secs.map(Duration::from_secs)),
        );
    if let Some(keys) = config.state_key_ring()? {
        builder = builder.state_keys(keys);
    }
    builder = fixtures::demo(builder);
    for i in 1..=GENERATED_TOOLS {
        builder = builder.tool(
            ToolDef::new(format!("tool_{i:03}"))
                .title(format!("Tool {i}"))
                .description(format!(
                    "Generated tool number {i} of the load benchmark; returns its query."
                ))
                .handler(|_ctx: RequestContext, args: QueryArgs| async move {
                    let _ = args.limit;
                    Ok::<_, ToolError>(args.query)
                }),
        );
    }
    builder.build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = match Config::load() {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    app::init_logging(&config)?;
    let server = build(&config)?;
    let metrics = PrometheusMetrics::install()?;
    metrics.spawn_upkeep(Duration::from_secs(5));
    let readiness = Readiness::new();
    let router = app::router(&config, server)?.merge(app::ops_router(&readiness, Some(&metrics)));
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await?;
    Ok(())
}

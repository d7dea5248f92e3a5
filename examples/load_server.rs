//! The reference server with 100 tools, for the `tools/list` case of the load benchmark
//! (`benches/load/`): no fixture set of `stateless-mcp` registers that many.
//!
//! Wired like `stateless_mcp::app::serve` (same flags through [`Config`], same server
//! settings as `app::build_server`, the demo toolset, the same [`Runner`](stateless_mcp::Runner)
//! from `app::runner` with the health and Prometheus routes, `#[tokio::main]`), plus
//! `tool_001` to `tool_095` with a typed argument struct: 100 tools, one page at the default
//! page size.
//!
//! With `LOAD_SERVER_SCOPED=1` (the `list_scoped` case of `benches/load/callgrind.sh`), every
//! even-numbered generated tool declares the scope `tools:read`, and a layer puts a
//! [`Principal`] granted `tools:read` into every request, standing in for an authorization
//! layer: the caller sees all 100 tools, through the per-caller (scoped) list pages.
//!
//! With `LOAD_SERVER_MOUNTED=service` or `=router` (the `mounted_*` cases of
//! `benches/load/callgrind.sh`), no runner: the endpoint the configuration describes is
//! mounted in an axum app of the user's own (`Router::route_service` with
//! `StreamableHttp::into_service`, or `Router::merge` with `into_router`) and served by
//! `axum::serve` with nodelay, as `examples/mount_in_axum.rs` does; it logs `listening on
//! ADDR`.
//!
//! Run with `cargo run --release --features reference-server --example load_server --
//! --listen 127.0.0.1:8080`; it logs `serving MCP address=ADDR` to stderr. Needs the
//! `reference-server` feature (its configuration and Runner wiring; `prometheus` comes with
//! it).

use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::app::{self, Config};
use stateless_mcp::handler::Principal;
use stateless_mcp::observability::{PrometheusMetrics, Readiness};
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};

/// Tools added to the demo's five.
const GENERATED_TOOLS: usize = 95;

#[derive(Deserialize, JsonSchema)]
struct QueryArgs {
    /// What to look up.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
}

/// The scope half of the generated tools declare with `LOAD_SERVER_SCOPED=1`.
const SCOPE: &str = "tools:read";

fn build(config: &Config, scoped: bool) -> Result<Server, stateless_mcp::Error> {
    // The reference server's settings and demo tools, plus the generated ones.
    let mut builder = app::server_builder(config)?;
    for i in 1..=GENERATED_TOOLS {
        let scopes: &[&str] = if scoped && i % 2 == 0 { &[SCOPE] } else { &[] };
        builder = builder.tool(
            ToolDef::new(format!("tool_{i:03}"))
                .scopes(scopes.iter().copied())
                .title(format!("Tool {i}"))
                .description(format!(
                    "Generated tool number {i} of the load benchmark; returns its query."
                ))
                .handler(|_ctx: RequestContext, args: QueryArgs| async move {
                    let _ = args.limit;
                    Ok::<_, HandlerError>(args.query)
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
    let _telemetry = app::init_logging(&config)?;
    let scoped = std::env::var("LOAD_SERVER_SCOPED").is_ok_and(|v| v == "1");
    let server = build(&config, scoped)?;
    let metrics = PrometheusMetrics::install()?;
    if let Ok(how) = std::env::var("LOAD_SERVER_MOUNTED") {
        return mounted(&config, server, &how).await;
    }
    let mut runner = app::runner(&config, server, Readiness::new(), Some(metrics))?;
    if scoped {
        let mut caller = Principal::new("load-bench");
        caller.scopes = vec![SCOPE.to_owned()];
        runner = runner.layer_endpoint(axum::Extension(caller));
    }
    runner.serve().await?;
    Ok(())
}

/// The endpoint mounted in an app of the user's own, served by `axum::serve`.
async fn mounted(
    config: &Config,
    server: Server,
    how: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    use axum::serve::{Listener as _, ListenerExt as _};
    let endpoint = app::endpoint(config, server.clone())?;
    let path = endpoint.endpoint_path().to_owned();
    let app = match how {
        "service" => axum::Router::new().route_service(&path, endpoint.into_service()),
        "router" => axum::Router::new().merge(endpoint.into_router()),
        other => return Err(format!("LOAD_SERVER_MOUNTED={other}: service or router").into()),
    };
    let app = app.route(
        "/hello",
        axum::routing::get(|| async { "the app's own route" }),
    );
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await?
        .tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
    tracing::info!("listening on {}", listener.local_addr()?);
    let stop = stateless_mcp::transport::http::shutdown_signal();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.await;
            server.drain().await;
        })
        .await?;
    Ok(())
}

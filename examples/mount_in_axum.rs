//! Mounts an MCP endpoint inside an existing axum application, next to its other routes,
//! with the operational routes the reference server has: `/healthz`, `/readyz`, `/metrics`,
//! and a graceful drain on Ctrl-C/SIGTERM.
//!
//! Run with `cargo run --example mount_in_axum`, then POST MCP requests to
//! `http://127.0.0.1:3000/api/mcp`; `GET /hello` is one of the application's own routes.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::observability::{PrometheusMetrics, Readiness, health_router};
use stateless_mcp::protocol::ResourceContents;
use stateless_mcp::{RequestContext, ResourceDef, Server, StreamableHttp, ToolDef, ToolError};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
struct Shout {
    /// Text to upper-case.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let server = Server::builder()
        .tool(
            ToolDef::new("shout")
                .description("Upper-cases its input")
                .handler(|_ctx: RequestContext, args: Shout| async move {
                    Ok::<_, ToolError>(args.text.to_uppercase())
                }),
        )
        .resource(
            ResourceDef::new("app://motd", "motd")
                .description("Message of the day")
                .mime_type("text/plain")
                .handler(|_ctx, uri| async move { Ok(ResourceContents::text(uri, "Hello!")) }),
        )
        .build()?;

    // Operations: readiness for the load balancer, Prometheus metrics, a shutdown token
    // that long-lived MCP streams end on.
    let readiness = Readiness::new();
    let metrics = PrometheusMetrics::install()?;
    metrics.spawn_upkeep(Duration::from_secs(5));
    let shutdown = CancellationToken::new();

    let app = axum::Router::new()
        .route(
            "/hello",
            axum::routing::get(|| async { "the app's own route" }),
        )
        .merge(
            StreamableHttp::new(server)
                .path("/api/mcp")
                .shutdown(shutdown.clone())
                .into_router(),
        )
        .merge(health_router(readiness.clone()))
        .merge(metrics.router("/metrics"));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    eprintln!("listening on http://{}/api/mcp", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            // Out of rotation first, then stop accepting and end long-lived streams.
            readiness.set_draining();
            tokio::time::sleep(Duration::from_secs(2)).await;
            shutdown.cancel();
        })
        .await?;
    Ok(())
}

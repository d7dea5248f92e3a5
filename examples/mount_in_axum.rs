//! An MCP endpoint next to an existing axum application's own routes, served by the
//! [`Runner`] with the operational routes the reference server has: `/healthz`, `/readyz`
//! (with a condition of the application's own), `/metrics`, and a graceful drain on
//! Ctrl-C/SIGTERM.
//!
//! Run with `cargo run --example mount_in_axum`, then POST MCP requests to
//! `http://127.0.0.1:3000/api/mcp`; `GET /hello` is one of the application's own routes.
//!
//! (To serve the router from your own `axum::serve` instead, see the docs of
//! `stateless_mcp::transport::http`: set TCP_NODELAY and a shutdown token yourself.)

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::observability::{PrometheusMetrics, Readiness};
use stateless_mcp::protocol::ResourceContents;
use stateless_mcp::{
    HandlerError, RequestContext, ResourceDef, Runner, Server, StreamableHttp, ToolDef,
};

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
                    Ok::<_, HandlerError>(args.text.to_uppercase())
                }),
        )
        .resource(
            ResourceDef::new("app://motd", "motd")
                .description("Message of the day")
                .mime_type("text/plain")
                .handler(|_ctx, uri| async move { Ok(ResourceContents::text(uri, "Hello!")) }),
        )
        .build()?;

    // Operations: readiness for the load balancer (with a condition of the app's own, flipped
    // by whatever watches its dependency), Prometheus metrics.
    let readiness = Readiness::new();
    let cache = readiness.condition("cache");
    cache.ready();
    let metrics = PrometheusMetrics::install()?;

    let own_routes = axum::Router::new().route(
        "/hello",
        axum::routing::get(|| async { "the app's own route" }),
    );
    Runner::new(StreamableHttp::new(server).path("/api/mcp"))
        .listen(([127, 0, 0, 1], 3000))
        .routes(own_routes)
        .readiness(readiness)
        .metrics(metrics)
        .drain_delay(Duration::from_secs(2))
        .serve()
        .await?;
    Ok(())
}

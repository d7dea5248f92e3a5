//! Mounts an MCP endpoint inside an existing axum application, next to its other routes.
//!
//! Run with `cargo run --example mount_in_axum`, then POST MCP requests to
//! `http://127.0.0.1:3000/api/mcp`; `GET /health` answers "ok".

use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::protocol::ResourceContents;
use stateless_mcp::{RequestContext, ResourceDef, Server, StreamableHttp, ToolDef, ToolError};

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

    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(StreamableHttp::new(server).path("/api/mcp").into_router());

    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    eprintln!("listening on http://{}/api/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

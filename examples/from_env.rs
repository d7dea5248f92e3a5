//! Your own server, configured like the reference server: [`Settings::from_env`] reads the
//! same `MCP_*` variables and config file (`MCP_CONFIG`), so the shipped Kubernetes and
//! compose files configure it too: `MCP_STATE_KEYS`, `MCP_BUS`, the stores, limits,
//! authorization and listeners.
//!
//! ```text
//! MCP_LISTEN=127.0.0.1:3000 MCP_PATH=/v1/mcp cargo run --example from_env --features config
//! ```
//!
//! Needs the `config` feature.

use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::settings::Settings;
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let settings = Settings::from_env()?;
    tracing::info!(settings = ?settings, "effective settings");
    let server = settings
        .apply(Server::builder())?
        .tool(
            ToolDef::new("shout").handler(|_ctx: RequestContext, args: Text| async move {
                Ok::<_, HandlerError>(args.text.to_uppercase())
            }),
        )
        .tool(
            ToolDef::new("whisper").handler(|_ctx: RequestContext, args: Text| async move {
                Ok::<_, HandlerError>(args.text.to_lowercase())
            }),
        )
        .build()?;
    settings.runner(server)?.serve().await?;
    Ok(())
}

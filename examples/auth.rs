//! A protected MCP server: bearer tokens from an OAuth 2.1 authorization server, one tool
//! that needs a scope, and the caller's identity in the handler.
//!
//! ```sh
//! cargo run --example auth --features auth -- https://auth.example.com http://localhost:8080/mcp
//! ```
//!
//! Needs the `auth` feature (`required-features` in Cargo.toml).
//!
//! Clients without a token get `401` with a `WWW-Authenticate` challenge pointing at
//! `/.well-known/oauth-protected-resource/mcp`; tokens must be issued by the given issuer
//! for the given resource, with the `mcp` scope (and `notes:write` to add notes).

use schemars::JsonSchema;
use serde::Deserialize;
use stateless_mcp::auth::ResourceServer;
use stateless_mcp::{HandlerError, RequestContext, Runner, Server, ToolDef};

#[derive(Deserialize, JsonSchema)]
struct Note {
    /// The note's text.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let issuer = args
        .next()
        .unwrap_or_else(|| "https://auth.example.com".into());
    let resource = args
        .next()
        .unwrap_or_else(|| "http://localhost:8080/mcp".into());

    let server = Server::builder()
        .tool(
            ToolDef::new("whoami")
                .description("Who the token says you are")
                .raw_handler(|ctx: RequestContext, _args| async move {
                    let subject = ctx.principal().and_then(|p| p.subject.clone());
                    Ok::<_, HandlerError>(format!("you are {}", subject.unwrap_or_default()))
                }),
        )
        .tool(
            ToolDef::new("add_note")
                .description("Adds a note (needs notes:write)")
                .scopes(["notes:write"])
                .handler(|_ctx: RequestContext, note: Note| async move {
                    Ok::<_, HandlerError>(format!("noted: {}", note.text))
                }),
        )
        .build()?;

    let auth = ResourceServer::builder(resource)
        .issuer(issuer)
        .required_scopes(["mcp"])
        .operation_scopes(server.clone())
        .build()?;
    // The RFC 9728 metadata routes are served unauthenticated next to the endpoint.
    Runner::new(server)
        .listen(([127, 0, 0, 1], 8080))
        .auth(auth)
        .serve()
        .await?;
    Ok(())
}

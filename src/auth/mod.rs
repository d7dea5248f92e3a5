//! An OAuth 2.1 resource server as tower middleware (feature `auth`, on by default).
//!
//! With no session, every request carries its own token and is checked on its own:
//!
//! - the token comes from `Authorization: Bearer …` only (a token in the query string is
//!   refused with `400 invalid_request`);
//! - a JWT is verified against the issuer's JWKS (found through RFC 8414 / OpenID Connect
//!   discovery or configured), cached by `kid`, refreshed on an unknown `kid` at a bounded
//!   rate and in the background before it expires; `iss`, `aud` (RFC 8707: must include
//!   this server's resource identifier), `exp` and `nbf` are checked with a leeway, and only
//!   allowed asymmetric algorithms are accepted (never `none`, never HMAC);
//! - any other token is introspected (RFC 7662) through the `oauth2` crate, and the answer is
//!   cached until the token expires (bounded in time and size);
//! - DPoP (RFC 9449), when turned on with a [`Dpop`] policy: `Authorization: DPoP` tokens
//!   with their `DPoP` proofs (key-bound, single-use across replicas, optional server
//!   nonces), beside bearer tokens or instead of them; see [`Dpop`];
//! - a missing or invalid token gets `401` with
//!   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; a token without a scope
//!   the operation needs gets `403` with `error="insufficient_scope"` and every scope the
//!   operation needs in one challenge; bodies are OAuth-style JSON errors;
//! - the scopes an operation needs are those every request needs, those of its method, and
//!   those declared on the tool, prompt or resource it names
//!   ([`ToolDef::scopes`](crate::ToolDef::scopes)); they are read from the `Mcp-Method` and
//!   `Mcp-Name` headers before the body, which the MCP endpoint later checks against the
//!   body;
//! - RFC 9728 metadata is served without authentication at
//!   `/.well-known/oauth-protected-resource` and at its form suffixed with the MCP path;
//! - admitted requests carry the [`Principal`](crate::handler::Principal) in their extensions
//!   (handlers read it with [`RequestContext::principal`](crate::RequestContext::principal))
//!   and lose their `Authorization` header: tokens are never logged nor forwarded.
//!
//! List results then show only what the caller's scopes allow, marked
//! `cacheScope: "private"`.
//!
//! ```no_run
//! use stateless_mcp::auth::ResourceServer;
//! use stateless_mcp::{HandlerError, RequestContext, Server, StreamableHttp, ToolDef};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder()
//!     .tool(
//!         ToolDef::new("delete_file")
//!             .scopes(["files:write"])
//!             .raw_handler(|ctx: RequestContext, _args| async move {
//!                 let who = ctx.principal().and_then(|p| p.subject.clone());
//!                 Ok::<_, HandlerError>(format!("deleted on behalf of {who:?}"))
//!             }),
//!     )
//!     .build()?;
//! let auth = ResourceServer::builder("https://mcp.example.com/mcp")
//!     .issuer("https://auth.example.com")
//!     .required_scopes(["mcp"])
//!     .operation_scopes(server.clone())
//!     .build()?;
//! let app = auth.protect(StreamableHttp::new(server).path("/mcp").allow_any_host().into_router());
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

mod algorithm;
mod bearer;
mod cache;
mod challenge;
mod claims;
mod discovery;
mod dpop;
mod drain;
mod future;
mod http_client;
mod introspection;
mod jwks;
mod jwt;
mod layer;
mod metadata;
mod resource_server;
mod scopes;
mod service;
mod transport_policy;

pub use algorithm::Algorithm;
pub use dpop::Dpop;
pub use future::ResponseFuture;
pub use layer::AuthLayer;
pub use resource_server::{ResourceServer, ResourceServerBuilder};
pub use service::AuthService;

//! An in-process client for testing your server (feature `testing`): it hands requests
//! straight to [`Server::handle`](crate::Server::handle), with no sockets and no HTTP, and
//! builds each one the way a 2026-07-28 client must — `_meta` with the protocol version, the
//! client's capabilities and its info, and the mirrored header values (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) that the HTTP transport would extract.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use stateless_mcp::testing::TestClient;
//! use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
//!
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder()
//!     .tool(ToolDef::new("add").handler(|_ctx: RequestContext, args: Add| async move {
//!         Ok::<_, HandlerError>((args.a + args.b).to_string())
//!     }))
//!     .build()?;
//! let client = TestClient::new(server);
//! assert_eq!(client.list_tools().await?[0].name, "add");
//! let sum: i64 = client.call_tool("add").arguments(&Add { a: 2, b: 3 }).send().await?;
//! assert_eq!(sum, 5);
//! # Ok(())
//! # }
//! ```
//!
//! What it offers:
//! - [`TestClient::discover`] and the lists, every page followed
//!   ([`TestClient::list_tools`], [`list_resources`](TestClient::list_resources),
//!   [`list_resource_templates`](TestClient::list_resource_templates),
//!   [`list_prompts`](TestClient::list_prompts));
//! - [`TestClient::call_tool`] ([`CallTool`]: typed [`send`](CallTool::send), or the
//!   whole [`result`](CallTool::result)), [`TestClient::read_resource`]
//!   ([`ReadResource`]), [`TestClient::get_prompt`] ([`GetPrompt`]),
//!   [`TestClient::complete`] ([`Complete`]);
//! - `input_required` rounds answered by a callback ([`TestClient::on_input`], with
//!   [`Answer`]s; the sealed `requestState` is carried back for you), or by hand, round by
//!   round ([`TestError::InputRequired`] gives you the requests and the state;
//!   `input_response` and `request_state` on the builders send them back);
//! - [`TestClient::listen`]: a `subscriptions/listen` stream ([`ListenStream`]) whose
//!   notifications a test awaits, each with a timeout;
//! - the caller's [`Principal`](crate::handler::Principal) (as an auth layer would put it into the
//!   request) and the client capabilities to present;
//! - [`TestClient::request`]: any method, with the standard `_meta`, answered as a raw
//!   [`Response`] (the JSON-RPC message, the notifications before it, the HTTP status
//!   the transport would send);
//! - [`TestClient::on_message`]: a hook that sees every message the client receives (to
//!   check them against the schema, or log them).
//!
//! Errors are one type, [`TestError`]: a JSON-RPC error ([`RpcError`]: code, message,
//! data) is told apart from a tool that ran and failed (a result with `isError`).

mod answer;
mod calls;
mod client;
mod error;
mod exchange;
mod listen;
mod rounds;

pub use answer::Answer;
pub use calls::{CallTool, Complete, GetPrompt, ReadResource};
pub use client::TestClient;
pub use error::{RpcError, TestError};
pub use exchange::Response;
pub use listen::{Listen, ListenStream};

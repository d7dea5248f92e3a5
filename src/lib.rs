//! stateless-mcp
mod error;
pub mod handler;
pub mod protocol;
pub mod server;
pub mod transport;
pub mod fixtures;
pub mod app;
pub use error::{Error, ErrorKind};
pub use handler::{RequestContext, ToolDef, ToolError};
pub use server::{Server, ServerBuilder};
pub use transport::http::StreamableHttp;

//! stateless-mcp
pub mod app;
mod error;
pub mod fixtures;
pub mod handler;
pub mod protocol;
pub mod server;
pub mod transport;
pub use error::{Error, ErrorKind};
pub use handler::{RequestContext, ToolDef, ToolError};
pub use server::{Server, ServerBuilder};
pub use transport::http::StreamableHttp;

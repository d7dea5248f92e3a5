//! stateless-mcp
mod error;
pub mod handler;
pub mod protocol;
pub use error::{Error, ErrorKind};
pub use handler::{RequestContext, ToolDef, ToolError};

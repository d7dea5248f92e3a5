//! stateless-mcp
pub mod protocol;

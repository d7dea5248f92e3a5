//! The names of the mirrored MCP headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`), lower-cased as `http` spells them. Reading and decoding them lives in one
//! crate-wide place that dispatch and the resource server share as well.

pub use crate::mirrored::{METHOD, NAME, PARAM_PREFIX, PROTOCOL_VERSION};

/// `Mcp-Session-Id`: the session of a 2025-11-25 client.
pub const SESSION_ID: &str = "mcp-session-id";

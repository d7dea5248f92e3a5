//! The header the HTTP transport reads besides the mirrored MCP ones (whose names, reading
//! and decoding live in one crate-wide place that dispatch and the resource server share).

/// `Mcp-Session-Id`: the session of a 2025-11-25 client.
pub const SESSION_ID: &str = "mcp-session-id";

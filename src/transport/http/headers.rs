//! The header the HTTP transport reads besides the mirrored MCP ones (whose names, reading
//! and decoding live in one crate-wide place that dispatch and the resource server share).

/// `Mcp-Session-Id`: the session of a 2025-11-25 client.
pub const SESSION_ID: &str = "mcp-session-id";
/// The idempotency key of a tool call (the IETF httpapi draft's header), for tools that
/// honour it.
pub(crate) const IDEMPOTENCY_KEY: &str = "idempotency-key";

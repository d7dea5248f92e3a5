//! The `_meta` keys this crate reads and writes (`io.modelcontextprotocol/…`).
//!
//! A leaf: imports nothing, so request `_meta`, result `_meta` and notifications share the
//! names without importing each other.

/// `_meta` key: the protocol version of this request (required).
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's self-reported implementation (optional).
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the requested log level (optional, deprecated).
pub(super) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key on results: the server's implementation.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

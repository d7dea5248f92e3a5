//! The 2025-11-25 wire, for legacy clients served on the same endpoint: the session
//! handshake (`initialize`), the methods this revision removed (`ping`, `logging/setLevel`,
//! `resources/subscribe`/`unsubscribe`), and server-to-client requests.
//!
//! Everything else a legacy client sends (lists, `tools/call`, `resources/read`,
//! `prompts/get`, `completion/complete`) uses the same params and results as the current
//! revision; the 2025-11-25 schema lets results carry the extra members (`resultType`,
//! `ttlMs`, `_meta`) this server adds.

use serde::{Deserialize, Serialize};

use super::capabilities::{ClientCapabilities, Implementation, ServerCapabilities};
use super::ids::RequestId;
use super::jsonrpc::JSONRPC_VERSION;
use super::notification::LoggingLevel;

/// The newest legacy revision, the one `initialize` offers when the client asks for one this
/// server does not speak.
pub(crate) const LEGACY_PROTOCOL_VERSION: &str = "2025-11-25";

/// The legacy revisions this server negotiates, newest first.
pub(crate) const LEGACY_PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// `initialize`.
pub(crate) const INITIALIZE: &str = "initialize";
/// `ping`.
pub(crate) const PING: &str = "ping";
/// `logging/setLevel`.
pub(crate) const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `resources/subscribe`.
pub(crate) const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe`.
pub(crate) const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";

/// The version `initialize` answers for a client that asked for `requested`: the same when
/// it is a legacy revision this server speaks, else the newest legacy one (the client then
/// decides whether it can speak it).
pub(crate) fn negotiate_version(requested: &str) -> &'static str {
    LEGACY_PROTOCOL_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(LEGACY_PROTOCOL_VERSION)
}

/// Whether `version` is a legacy revision this server speaks.
pub(crate) fn is_legacy_version(version: &str) -> bool {
    LEGACY_PROTOCOL_VERSIONS.contains(&version)
}

/// Params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) struct InitializeParams {
    /// The revision the client wants.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the client supports, for the whole session.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is (self-reported).
    #[serde(rename = "clientInfo")]
    pub client_info: Implementation,
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) struct InitializeResult {
    /// The negotiated revision.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    #[serde(rename = "serverInfo")]
    pub server_info: Implementation,
    /// How to use this server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

impl InitializeResult {
    /// A result for `version`, `capabilities` and `server_info`.
    pub(crate) fn new(
        version: impl Into<String>,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version: version.into(),
            capabilities,
            server_info,
            instructions: None,
        }
    }
}

/// Params of `logging/setLevel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) struct SetLevelParams {
    /// The lowest level the client wants to receive.
    pub level: LoggingLevel,
}

/// Params of `resources/subscribe` and `resources/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) struct SubscribeParams {
    /// The resource.
    pub uri: String,
}

/// A server-to-client request (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`), sent on a legacy client's response stream; its answer comes back as a
/// separate POST carrying the same `id`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ServerRequest<'a, P: ?Sized> {
    jsonrpc: &'static str,
    /// The id the client's answer carries.
    pub id: &'a RequestId,
    /// The method.
    pub method: &'a str,
    /// Its params.
    pub params: &'a P,
}

impl<'a, P: ?Sized + Serialize> ServerRequest<'a, P> {
    /// A request `method` with `params`, identified by `id`.
    pub(crate) fn new(id: &'a RequestId, method: &'a str, params: &'a P) -> Self {
        ServerRequest {
            jsonrpc: JSONRPC_VERSION,
            id,
            method,
            params,
        }
    }
}

/// A list-changed notification on the legacy wire: no params.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LegacyNotification<'a, P: Serialize> {
    jsonrpc: &'static str,
    /// The method, e.g. `notifications/tools/list_changed`.
    pub method: &'a str,
    /// Its params, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<'a, P: Serialize> LegacyNotification<'a, P> {
    /// A notification `method` with optional `params`.
    pub(crate) fn new(method: &'a str, params: Option<P>) -> Self {
        LegacyNotification {
            jsonrpc: JSONRPC_VERSION,
            method,
            params,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn versions_are_negotiated_down_to_what_is_spoken() {
        assert_eq!(negotiate_version("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate_version("2025-11-25"), "2025-11-25");
        assert_eq!(negotiate_version("2024-11-05"), LEGACY_PROTOCOL_VERSION);
        assert_eq!(negotiate_version("2026-07-28"), LEGACY_PROTOCOL_VERSION);
        assert!(is_legacy_version("2025-03-26"));
        assert!(!is_legacy_version("2026-07-28"));
    }

    #[test]
    fn wire_shapes() {
        let p: InitializeParams = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "c", "version": "1"}
        }))
        .unwrap();
        assert!(p.capabilities.supports_form_elicitation());
        let id = RequestId::from("r1");
        let params = json!({"message": "hi"});
        assert_eq!(
            serde_json::to_value(ServerRequest::new(&id, "elicitation/create", &params)).unwrap(),
            json!({"jsonrpc": "2.0", "id": "r1", "method": "elicitation/create", "params": {"message": "hi"}})
        );
        assert_eq!(
            serde_json::to_value(LegacyNotification::<()>::new(
                "notifications/tools/list_changed",
                None
            ))
            .unwrap(),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );
    }
}

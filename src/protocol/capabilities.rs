//! Client and server capabilities, and the `Implementation` that names a peer.

use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::annotations::Icon;

/// What a client declares it supports, per request, in
/// `_meta["io.modelcontextprotocol/clientCapabilities"]`.
///
/// `{}` means no optional capability. Servers never infer capabilities from earlier requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Form and/or URL elicitation. `{}` means form only.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::strict::option_object"
    )]
    pub elicitation: Option<ElicitationCapability>,
    /// Sampling (deprecated in this revision, still functional).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::strict::option_object"
    )]
    pub sampling: Option<SamplingCapability>,
    /// Roots (deprecated in this revision, still functional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// Experimental capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions, keyed by prefixed id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

impl ClientCapabilities {
    /// Capabilities naming form elicitation only (used in `-32021` data).
    pub fn elicitation_form() -> Self {
        ClientCapabilities {
            elicitation: Some(ElicitationCapability::default()),
            ..Default::default()
        }
    }

    /// Capabilities naming sampling only.
    pub fn sampling() -> Self {
        ClientCapabilities {
            sampling: Some(SamplingCapability::default()),
            ..Default::default()
        }
    }

    /// Capabilities naming roots only.
    pub fn roots() -> Self {
        ClientCapabilities {
            roots: Some(JsonObject::new()),
            ..Default::default()
        }
    }

    /// Whether form-mode elicitation is supported (`{}` or an explicit `form`).
    pub fn supports_form_elicitation(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// Whether URL-mode elicitation is supported.
    pub fn supports_url_elicitation(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }
}

/// The client's elicitation modes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
}

/// The client's sampling support.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Context inclusion support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Tool-enabled sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
}

/// What the server supports, as advertised by `server/discover`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Log messages (deprecated in this revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Experimental capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions, keyed by prefixed id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

/// A capability with an optional `listChanged` flag.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// Whether the server notifies list changes on `subscriptions/listen`.
    #[serde(
        default,
        rename = "listChanged",
        skip_serializing_if = "Option::is_none"
    )]
    pub list_changed: Option<bool>,
}

/// The resources capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// Whether `resourceSubscriptions` on `subscriptions/listen` is honoured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server notifies list changes.
    #[serde(
        default,
        rename = "listChanged",
        skip_serializing_if = "Option::is_none"
    )]
    pub list_changed: Option<bool>,
}

/// The name and version of a client or server implementation.
///
/// ```
/// use stateless_mcp::Server;
/// use stateless_mcp::protocol::Implementation;
///
/// let info = Implementation::new("docs-server", env!("CARGO_PKG_VERSION")).with_title("Docs");
/// let server = Server::builder().server_info(info).build().unwrap();
/// assert_eq!(server.server_info().name, "docs-server");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Home page.
    #[serde(
        default,
        rename = "websiteUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub website_url: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: None,
        }
    }

    /// Sets the display title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicitation_empty_means_form_only() {
        let c: ClientCapabilities = serde_json::from_str(r#"{"elicitation":{}}"#).unwrap();
        assert!(c.supports_form_elicitation());
        assert!(!c.supports_url_elicitation());
        let c: ClientCapabilities = serde_json::from_str(r#"{"elicitation":{"url":{}}}"#).unwrap();
        assert!(!c.supports_form_elicitation());
        assert!(c.supports_url_elicitation());
        let c: ClientCapabilities = serde_json::from_str("{}").unwrap();
        assert!(!c.supports_form_elicitation());
    }
}

//! Tool definitions and tool call results.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JsonObject;
use super::annotations::Icon;
use super::content::ContentBlock;
use super::result::{ResultMeta, ResultType, StampResult};

/// A tool as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tool {
    /// Unique name, 1–128 characters of `[A-Za-z0-9_.-]`.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema (2020-12) of the arguments; its root has `"type": "object"`.
    #[serde(rename = "inputSchema")]
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`.
    #[serde(
        default,
        rename = "outputSchema",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Tool {
    /// A tool definition with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }
}

/// Hints about a tool's behaviour. Clients treat them as untrusted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(
        default,
        rename = "readOnlyHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(
        default,
        rename = "destructiveHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(
        default,
        rename = "idempotentHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities.
    #[serde(
        default,
        rename = "openWorldHint",
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints (clients then assume the spec's defaults: not read-only, destructive, not
    /// idempotent, open world).
    ///
    /// ```
    /// use stateless_mcp::protocol::ToolAnnotations;
    ///
    /// let hints = ToolAnnotations::new().read_only(true).open_world(false);
    /// assert_eq!(hints.read_only_hint, Some(true));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the display name.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Whether the tool leaves its environment unchanged (`readOnlyHint`).
    #[must_use]
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only_hint = Some(yes);
        self
    }

    /// Whether the tool may perform destructive updates (`destructiveHint`).
    #[must_use]
    pub fn destructive(mut self, yes: bool) -> Self {
        self.destructive_hint = Some(yes);
        self
    }

    /// Whether calling it twice with the same arguments has no further effect
    /// (`idempotentHint`).
    #[must_use]
    pub fn idempotent(mut self, yes: bool) -> Self {
        self.idempotent_hint = Some(yes);
        self
    }

    /// Whether the tool talks to an open world of external entities (`openWorldHint`).
    #[must_use]
    pub fn open_world(mut self, yes: bool) -> Self {
        self.open_world_hint = Some(yes);
        self
    }
}

/// A present field is `Some`, even when it is `null` (`structuredContent` may be any value).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The result of `tools/call`.
///
/// ```
/// use stateless_mcp::protocol::{CallToolResult, ContentBlock};
///
/// let ok = CallToolResult::new(vec![
///     ContentBlock::text("two files"),
///     ContentBlock::image(b"\x89PNG...", "image/png"),
/// ]);
/// assert!(!ok.is_error());
/// let failed = CallToolResult::error("the repository is archived");
/// assert!(failed.is_error());
/// let typed = CallToolResult::structured(serde_json::json!({"count": 2}));
/// # drop((typed, ok));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallToolResult {
    #[serde(rename = "resultType", default)]
    result_type: ResultType,
    /// Unstructured content.
    pub content: Vec<ContentBlock>,
    /// Structured result (any JSON value); must match `outputSchema` when one is set.
    #[serde(
        default,
        rename = "structuredContent",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub structured_content: Option<Value>,
    /// `true` when the tool itself failed (the model can see and correct it).
    #[serde(default, rename = "isError", skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(
        default,
        rename = "_meta",
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl CallToolResult {
    /// A successful result with these content blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            result_type: ResultType::Complete,
            content,
            structured_content: None,
            is_error: None,
            meta: ResultMeta::default(),
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A tool execution error (`isError: true`) with one text block the model can act on.
    pub fn error(message: impl Into<String>) -> Self {
        let mut r = Self::text(message);
        r.is_error = Some(true);
        r
    }

    /// A result carrying `structuredContent` and, for older clients, its JSON as a text block.
    pub fn structured(value: Value) -> Self {
        let mut r = Self::text(value.to_string());
        r.structured_content = Some(value);
        r
    }

    /// Whether this result reports a tool error.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

impl StampResult for CallToolResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }

    fn content_size_hint(&self) -> usize {
        self.content.iter().map(ContentBlock::payload_len).sum()
    }

    /// Text blocks without annotations or `_meta`, no `structuredContent` (the common tool
    /// result): byte for byte what the derived `Serialize` writes, without `_meta`.
    fn encode_plain(&self, out: &mut Vec<u8>) -> bool {
        let plain = self.structured_content.is_none()
            && self.content.iter().all(|c| {
                matches!(
                    c,
                    ContentBlock::Text {
                        annotations: None,
                        meta: None,
                        ..
                    }
                )
            });
        if !plain {
            return false;
        }
        out.extend_from_slice(match self.result_type {
            ResultType::Complete => br#"{"resultType":"complete","content":["#,
            ResultType::InputRequired => br#"{"resultType":"input_required","content":["#,
        });
        for (i, block) in self.content.iter().enumerate() {
            if let ContentBlock::Text { text, .. } = block {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(br#"{"type":"text","text":"#);
                super::escape::write_str(out, text);
                out.push(b'}');
            }
        }
        out.push(b']');
        match self.is_error {
            None => {}
            Some(true) => out.extend_from_slice(br#","isError":true"#),
            Some(false) => out.extend_from_slice(br#","isError":false"#),
        }
        out.push(b'}');
        true
    }
}

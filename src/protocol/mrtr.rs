//! Multi-round-trip requests (SEP-2322): `InputRequiredResult`, the input requests a server
//! may embed in it (elicitation, sampling, roots) and the responses a client sends back.
//!
//! Only `tools/call`, `resources/read` and `prompts/get` may answer `input_required`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JsonObject;
use super::annotations::Role;
use super::capabilities::ClientCapabilities;
use super::result::{ResultMeta, ResultType, StampResult};
use super::tool::Tool;

/// `elicitation/create`.
pub(crate) const ELICITATION_CREATE: &str = "elicitation/create";
/// `sampling/createMessage`.
pub(crate) const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `roots/list`.
pub(crate) const ROOTS_LIST: &str = "roots/list";

/// One request for input from the client, embedded in an [`InputRequiredResult`] (no
/// `jsonrpc`, no `id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
#[non_exhaustive]
pub enum InputRequest {
    /// Ask the user for information (form or URL mode).
    #[serde(rename = "elicitation/create")]
    Elicit(ElicitParams),
    /// Ask the client's model for a completion (deprecated, still functional).
    #[serde(rename = "sampling/createMessage")]
    CreateMessage(CreateMessageParams),
    /// Ask for the client's roots (deprecated, still functional).
    #[serde(rename = "roots/list")]
    ListRoots(ListRootsParams),
}

impl InputRequest {
    /// Whether a client with `caps` may be sent this request: elicitation in the right mode,
    /// sampling (with `sampling.tools` when the request offers tools), roots.
    pub fn supported_by(&self, caps: &ClientCapabilities) -> bool {
        match self {
            InputRequest::Elicit(ElicitParams::Form { .. }) => caps.supports_form_elicitation(),
            InputRequest::Elicit(ElicitParams::Url { .. }) => caps.supports_url_elicitation(),
            InputRequest::CreateMessage(p) => caps
                .sampling
                .as_ref()
                .is_some_and(|s| p.tools.is_none() || s.tools.is_some()),
            InputRequest::ListRoots(_) => caps.roots.is_some(),
        }
    }

    /// Adds the capability this request needs to `required` (for `-32021` data).
    pub fn require_in(&self, required: &mut ClientCapabilities) {
        match self {
            InputRequest::Elicit(p) => {
                let e = required.elicitation.get_or_insert_with(Default::default);
                match p {
                    ElicitParams::Form { .. } => e.form = Some(JsonObject::new()),
                    ElicitParams::Url { .. } => e.url = Some(JsonObject::new()),
                }
            }
            InputRequest::CreateMessage(p) => {
                let s = required.sampling.get_or_insert_with(Default::default);
                if p.tools.is_some() {
                    s.tools = Some(JsonObject::new());
                }
            }
            InputRequest::ListRoots(_) => required.roots = Some(JsonObject::new()),
        }
    }
}

/// Elicitation params: a form (the default mode) or a URL to visit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitParams {
    /// `{"mode":"url","message","url"}`: an out-of-band step, e.g. a login.
    Url {
        /// Always `"url"`.
        mode: UrlMode,
        /// What the user is asked to do.
        message: String,
        /// Where to go.
        url: String,
    },
    /// `{"mode"?:"form","message","requestedSchema"}`: a flat form of primitive fields.
    Form {
        /// `"form"` (optional on the wire).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<FormMode>,
        /// What the user is asked for. Never secrets.
        message: String,
        /// `{"type":"object","properties":{…},"required"?:[…]}` of primitive schemas.
        #[serde(rename = "requestedSchema")]
        requested_schema: JsonObject,
    },
}

/// The `"form"` mode marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FormMode {
    /// `"form"`.
    #[serde(rename = "form")]
    Form,
}

/// The `"url"` mode marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UrlMode {
    /// `"url"`.
    #[serde(rename = "url")]
    Url,
}

impl ElicitParams {
    /// A form asking `message`, with a requested schema.
    pub fn form(message: impl Into<String>, requested_schema: JsonObject) -> Self {
        ElicitParams::Form {
            mode: Some(FormMode::Form),
            message: message.into(),
            requested_schema,
        }
    }

    /// A URL-mode elicitation.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitParams::Url {
            mode: UrlMode::Url,
            message: message.into(),
            url: url.into(),
        }
    }
}

/// Content of a sampling message: one block or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// One block.
    One(SamplingContentBlock),
    /// Several blocks.
    Many(Vec<SamplingContentBlock>),
}

/// A block in a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingContentBlock {
    /// Text.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: String,
    },
    /// An image (base64).
    #[serde(rename = "image")]
    Image {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio (base64).
    #[serde(rename = "audio")]
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// The model asks to use a tool.
    #[serde(rename = "tool_use")]
    ToolUse {
        /// Id of this use.
        id: String,
        /// Tool name.
        name: String,
        /// Tool input.
        input: JsonObject,
    },
    /// The result of a tool use.
    #[serde(rename = "tool_result")]
    ToolResult {
        /// The use this answers.
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        /// Result content.
        content: Vec<Value>,
        /// Structured result.
        #[serde(
            default,
            rename = "structuredContent",
            skip_serializing_if = "Option::is_none"
        )]
        structured_content: Option<Value>,
        /// Whether the tool failed.
        #[serde(default, rename = "isError", skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
}

impl SamplingMessage {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: SamplingContent::One(SamplingContentBlock::Text { text: text.into() }),
        }
    }
}

/// `sampling/createMessage` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Token budget.
    #[serde(rename = "maxTokens")]
    pub max_tokens: u64,
    /// System prompt.
    #[serde(
        default,
        rename = "systemPrompt",
        skip_serializing_if = "Option::is_none"
    )]
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Stop sequences.
    #[serde(
        default,
        rename = "stopSequences",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_sequences: Option<Vec<String>>,
    /// Model preferences (hints and priorities), as sent.
    #[serde(
        default,
        rename = "modelPreferences",
        skip_serializing_if = "Option::is_none"
    )]
    pub model_preferences: Option<JsonObject>,
    /// `none` (deprecated values: `thisServer`, `allServers`).
    #[serde(
        default,
        rename = "includeContext",
        skip_serializing_if = "Option::is_none"
    )]
    pub include_context: Option<String>,
    /// Tools the model may use (needs the client's `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// Tool choice `{mode}`.
    #[serde(
        default,
        rename = "toolChoice",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_choice: Option<JsonObject>,
    /// Provider metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

impl CreateMessageParams {
    /// A request for a completion of `messages` within `max_tokens`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageParams {
            messages,
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: None,
            model_preferences: None,
            include_context: None,
            tools: None,
            tool_choice: None,
            metadata: None,
        }
    }
}

/// `roots/list` params (only `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsParams {
    /// Metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A server's answer "I need input before I can finish".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputRequiredResult {
    #[serde(rename = "resultType")]
    result_type: ResultType,
    /// Input requests by server-chosen key.
    #[serde(
        default,
        rename = "inputRequests",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// Opaque state the client echoes on its retry.
    #[serde(
        default,
        rename = "requestState",
        skip_serializing_if = "Option::is_none"
    )]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(
        default,
        rename = "_meta",
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl InputRequiredResult {
    /// An `input_required` result; at least one of the two parts must be present.
    pub fn new(
        input_requests: Option<BTreeMap<String, InputRequest>>,
        request_state: Option<String>,
    ) -> Self {
        InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests,
            request_state,
            meta: ResultMeta::default(),
        }
    }
}

impl StampResult for InputRequiredResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// `accept`, `decline` or `cancel`.
    pub action: ElicitAction,
    /// The submitted form (on `accept` in form mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Refused.
    Decline,
    /// Dismissed.
    Cancel,
}

/// The client model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Usually `assistant`.
    pub role: Role,
    /// The generated content.
    pub content: SamplingContent,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped.
    #[serde(
        default,
        rename = "stopReason",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_reason: Option<String>,
}

/// A root the client exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The client's roots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

/// A response to one input request, as sent in `inputResponses`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
}

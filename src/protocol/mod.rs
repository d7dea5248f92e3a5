//! The data layer: serde types for every server-side message of MCP 2026-07-28.
//!
//! Nothing here knows about tokio, axum or HTTP. Result types carry `resultType` and a
//! `_meta` that the server stamps with `io.modelcontextprotocol/serverInfo`; wire errors are
//! [`ErrorObject`]s built with one named constructor per code.

mod annotations;
mod capabilities;
mod completion;
mod content;
mod discover;
mod error;
pub(crate) mod escape;
mod ids;
mod jsonrpc;
mod keys;
pub(crate) mod legacy;
mod lists;
mod meta;
pub(crate) mod methods;
mod mrtr;
mod notification;
mod prompt;
mod resource;
mod result;
mod skill;
pub(crate) mod strict;
mod subscription;
mod task;
mod tool;

/// A JSON object.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// The protocol revision this crate implements.
pub(crate) const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

pub use annotations::{Annotations, Icon, IconTheme, Role};
pub use capabilities::{
    ClientCapabilities, ElicitationCapability, Implementation, ListChangedCapability,
    ResourcesCapability, SamplingCapability, ServerCapabilities,
};
pub use completion::{
    CompleteRequest, CompleteResult, Completion, CompletionArgument, CompletionContext,
    CompletionReference, MAX_COMPLETION_VALUES,
};
pub use content::ContentBlock;
pub use discover::DiscoverResult;
pub use error::{ErrorCode, ErrorObject};
pub(crate) use ids::IdField;
pub use ids::{ProgressToken, RequestId};
pub(crate) use jsonrpc::IncomingMessage;
pub(crate) use jsonrpc::ResponseRef;
pub use jsonrpc::{ErrorResponse, Notification};
pub(crate) use keys::PROTOCOL_VERSION_KEY;
pub use keys::SERVER_INFO_KEY;
#[cfg(feature = "testing")]
pub(crate) use keys::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY};
pub use lists::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
};
pub use meta::RequestMeta;
pub(crate) use meta::{BoxedMeta, ClientIdentity, DeferredMeta, MetaWire, SessionMeta};
pub use mrtr::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, FormMode,
    InputRequest, InputRequiredResult, InputResponse, ListRootsParams, ListRootsResult, Root,
    SamplingContent, SamplingContentBlock, SamplingMessage, UrlMode,
};
pub(crate) use mrtr::{ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE};
pub(crate) use notification::{LOG_MESSAGE_METHOD, PROGRESS_METHOD};
pub use notification::{LogMessageParams, LoggingLevel, ProgressParams};
pub use prompt::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
pub use resource::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
pub(crate) use result::StampResult;
pub use result::{CachePolicy, CacheScope, ResultMeta, ResultType};
pub(crate) use skill::{
    GetSkillResult, ListSkillsResult, SKILLS_EXTENSION, SKILLS_GET, SKILLS_LIST, Skill,
    SkillResource,
};
pub use subscription::{
    AcknowledgedParams, ListChangedParams, ResourceUpdatedParams, SubscriptionFilter,
    SubscriptionMeta, SubscriptionsListenResult,
};
pub(crate) use subscription::{
    PROMPTS_LIST_CHANGED, RESOURCES_LIST_CHANGED, RESOURCES_UPDATED, SUBSCRIPTIONS_ACKNOWLEDGED,
    TOOLS_LIST_CHANGED,
};
pub use task::{CreateTaskResult, Task};
pub(crate) use task::{
    GetTaskResult, TASKS_CANCEL, TASKS_EXTENSION, TASKS_GET, TASKS_NOTIFICATION, TASKS_UPDATE,
    TaskAck, TaskNotificationParams, iso8601,
};
pub use tool::{CallToolResult, Tool, ToolAnnotations};

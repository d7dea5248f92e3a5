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
mod ids;
mod jsonrpc;
mod keys;
pub mod legacy;
mod lists;
mod meta;
pub mod methods;
mod mrtr;
mod notification;
mod prompt;
mod resource;
mod result;
pub(crate) mod strict;
mod subscription;
mod task;
mod tool;

/// A JSON object.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// The protocol revision this crate implements.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

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
pub use ids::{IdField, ProgressToken, RequestId};
pub use jsonrpc::{ErrorResponse, IncomingMessage, JSONRPC_VERSION, Notification, ResponseRef};
pub use keys::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
};
pub use lists::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
};
pub(crate) use meta::MetaWire;
pub use meta::RequestMeta;
pub use mrtr::{
    CreateMessageParams, CreateMessageResult, ELICITATION_CREATE, ElicitAction, ElicitParams,
    ElicitResult, FormMode, InputRequest, InputRequiredResult, InputResponse, ListRootsParams,
    ListRootsResult, ROOTS_LIST, Root, SAMPLING_CREATE_MESSAGE, SamplingContent,
    SamplingContentBlock, SamplingMessage, UrlMode,
};
pub use notification::{
    LOG_MESSAGE_METHOD, LogMessageParams, LoggingLevel, PROGRESS_METHOD, ProgressParams,
};
pub use prompt::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
pub use resource::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
pub use result::{CachePolicy, CacheScope, ResultMeta, ResultType, StampResult};
pub use subscription::{
    AcknowledgedParams, ListChangedParams, ListenResultMeta, PROMPTS_LIST_CHANGED,
    RESOURCES_LIST_CHANGED, RESOURCES_UPDATED, ResourceUpdatedParams, SUBSCRIPTIONS_ACKNOWLEDGED,
    SubscriptionFilter, SubscriptionMeta, SubscriptionsListenResult, TOOLS_LIST_CHANGED,
};
pub use task::{
    CreateTaskResult, GetTaskResult, TASKS_CANCEL, TASKS_EXTENSION, TASKS_GET, TASKS_NOTIFICATION,
    TASKS_UPDATE, Task, TaskAck, TaskNotificationParams, iso8601,
};
pub use tool::{CallToolResult, Tool, ToolAnnotations};

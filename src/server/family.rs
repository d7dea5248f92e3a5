//! The seam the Tasks extension plugs into: the [`TaskFamily`] the ladder (`tasks/*`) and
//! `tools/call` hand task work to, and what crosses it ([`TaskRequest`], [`TaskCall`],
//! [`ToolCall`]). The family (`crate::tasks`) holds a `Server` and calls back into the
//! core through its accessors and the few core pieces re-exported here; the core never names
//! the family.

use http::Extensions;
use serde_json::Value;

use super::envelope::{ParamsView, string_field};
use super::mrtr::Retry;
use crate::handler::RequestContext;
use crate::handler::input::{Stop, parse_responses};
use crate::protocol::{
    CallToolResult, ClientCapabilities, ErrorObject, JsonObject, RequestId, RequestMeta,
    TASKS_CANCEL, TASKS_EXTENSION, TASKS_GET,
};
use futures_util::future::BoxFuture;

pub(crate) use super::methods::tools::tool_call_named;
pub(crate) use super::runner::failed;
pub(crate) use super::scopes::principal_digest;

/// Makes a tool's handler future from its context (the same call as inline).
pub(crate) type ToolCall =
    Box<dyn FnOnce(RequestContext) -> BoxFuture<'static, Result<CallToolResult, Stop>> + Send>;

/// What one `tasks/*` request asks.
pub(crate) enum TaskAsk {
    /// `tasks/get`.
    Get,
    /// `tasks/update`, with its `inputResponses`.
    Update(JsonObject),
    /// `tasks/cancel`.
    Cancel,
}

/// A `tasks/*` request, its params read.
pub(crate) struct TaskRequest {
    pub(crate) id: RequestId,
    pub(crate) task_id: String,
    pub(crate) ask: TaskAsk,
    pub(crate) meta: RequestMeta,
    pub(crate) extensions: Extensions,
}

impl TaskRequest {
    /// Gates the request on its own client capabilities first (`-32021` naming the
    /// extension, before the task id is even read), then reads its params.
    pub(super) fn read(
        id: &RequestId,
        method: &str,
        meta: RequestMeta,
        view: &ParamsView<'_>,
        extensions: Extensions,
    ) -> Result<Self, ErrorObject> {
        if !declares_tasks(&meta.client_capabilities) {
            return Err(missing_tasks_extension());
        }
        let task_id = string_field(view.task_id, "taskId")?.into_owned();
        let ask = match method {
            TASKS_GET => TaskAsk::Get,
            TASKS_CANCEL => TaskAsk::Cancel,
            _ => TaskAsk::Update(parse_responses(view.input_responses)?),
        };
        Ok(TaskRequest {
            id: id.clone(),
            task_id,
            ask,
            meta,
            extensions,
        })
    }
}

/// A `tools/call` to run as a task: the request, the tool and its checked arguments, its
/// handler bound to them, and what the retry brought (answers, state, single-use claim, the
/// binding an inline `input_required` round is sealed to).
pub(crate) struct TaskCall {
    pub(crate) id: RequestId,
    pub(crate) meta: RequestMeta,
    pub(crate) extensions: Extensions,
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) call: ToolCall,
    pub(crate) retry: Retry,
}

/// Whether the client declared the Tasks extension on this request.
pub(super) fn declares_tasks(caps: &ClientCapabilities) -> bool {
    caps.extensions
        .as_ref()
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(|v| !v.is_null())
}

/// `-32021` naming the Tasks extension in `data.requiredCapabilities`.
pub(super) fn missing_tasks_extension() -> ErrorObject {
    let mut extensions = JsonObject::new();
    extensions.insert(TASKS_EXTENSION.into(), Value::Object(JsonObject::new()));
    let required = ClientCapabilities {
        extensions: Some(extensions),
        ..ClientCapabilities::default()
    };
    let mut e = ErrorObject::missing_client_capability(&required);
    e.message =
        format!("Missing required client capability: the {TASKS_EXTENSION} extension").into();
    e
}

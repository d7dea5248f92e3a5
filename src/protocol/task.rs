//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the wire: the task a
//! client follows, the flat `CreateTaskResult` a task-capable tool call answers, the
//! `tasks/get` result and the `notifications/tasks` params.
//!
//! Leaf module: serde types only.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::result::{ResultMeta, StampResult};

/// The extension's id, the key under `capabilities.extensions` on both sides.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `tasks/get`: a task's status (and result, error or input requests).
pub(crate) const TASKS_GET: &str = "tasks/get";
/// `tasks/update`: the client's answers to a task's input requests.
pub(crate) const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/cancel`: stop a task.
pub(crate) const TASKS_CANCEL: &str = "tasks/cancel";
/// `notifications/tasks`: a task's status changed (on `subscriptions/listen` streams).
pub(crate) const TASKS_NOTIFICATION: &str = "notifications/tasks";

/// A task as clients see it (the wire's `Task`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The task's handle.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// A human-readable note on the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601, UTC).
    pub created_at: String,
    /// When its status last changed (ISO 8601, UTC).
    pub last_updated_at: String,
    /// How long it stays readable after its last change, in milliseconds (`null`: no
    /// limit). Always present.
    pub ttl_ms: Option<u64>,
    /// How often to poll `tasks/get`, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// The answer to a `tools/call` that became a task: `resultType: "task"` and the task's
/// fields, flat.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CreateTaskResult {
    #[serde(rename = "resultType")]
    result_type: &'static str,
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    pub meta: ResultMeta,
}

impl CreateTaskResult {
    /// The result announcing `task`.
    pub fn new(task: Task) -> Self {
        CreateTaskResult {
            result_type: "task",
            task,
            meta: ResultMeta::default(),
        }
    }
}

impl StampResult for CreateTaskResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}

/// The result of `tasks/get`: `resultType: "complete"`, the task's fields, and by status the
/// inlined tool result (`completed`), the error (`failed`) or the input requests
/// (`input_required`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskResult {
    result_type: &'static str,
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// The tool result, once completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error object, once failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// What the task asks the client, by key (`{method, params}` each), while
    /// `input_required`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, Value>>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    pub meta: ResultMeta,
}

impl GetTaskResult {
    /// The detailed view of `task`.
    pub fn new(
        task: Task,
        result: Option<Value>,
        error: Option<Value>,
        input_requests: Option<BTreeMap<String, Value>>,
    ) -> Self {
        GetTaskResult {
            result_type: "complete",
            task,
            result,
            error,
            input_requests,
            meta: ResultMeta::default(),
        }
    }
}

impl StampResult for GetTaskResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}

/// The acknowledgement of `tasks/update` and `tasks/cancel`: `{"resultType":"complete"}`
/// and `_meta`, nothing else.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub(crate) struct TaskAck {
    #[serde(rename = "resultType")]
    result_type: super::result::ResultType,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    pub meta: ResultMeta,
}

impl StampResult for TaskAck {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}

/// Params of `notifications/tasks` on a listen stream: the task (without its result, error
/// or input requests: `tasks/get` has those) and the subscription id.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub(crate) struct TaskNotificationParams {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Subscription id.
    #[serde(rename = "_meta")]
    pub meta: super::subscription::SubscriptionMeta,
}

impl TaskNotificationParams {
    /// The notification of `task` on the stream `meta` names.
    pub(crate) fn new(task: Task, meta: super::subscription::SubscriptionMeta) -> Self {
        TaskNotificationParams { task, meta }
    }
}

/// Formats Unix milliseconds as ISO 8601 in UTC, with milliseconds
/// (`2026-07-28T12:00:00.000Z`).
pub(crate) fn iso8601(unix_ms: u64) -> String {
    let ms = i64::try_from(unix_ms).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn task() -> Task {
        Task {
            task_id: "t1".into(),
            status: "working".into(),
            status_message: None,
            created_at: iso8601(0),
            last_updated_at: iso8601(1_785_240_000_123),
            ttl_ms: Some(60_000),
            poll_interval_ms: Some(500),
        }
    }

    #[test]
    fn the_create_result_is_flat_and_carries_no_envelope_fields() {
        let v = serde_json::to_value(CreateTaskResult::new(task())).unwrap();
        assert_eq!(
            v,
            json!({"resultType": "task", "taskId": "t1", "status": "working",
                   "createdAt": "1970-01-01T00:00:00.000Z",
                   "lastUpdatedAt": "2026-07-28T12:00:00.123Z",
                   "ttlMs": 60000, "pollIntervalMs": 500})
        );
        let ack = serde_json::to_value(TaskAck::default()).unwrap();
        assert_eq!(ack, json!({"resultType": "complete"}));
    }

    #[test]
    fn get_inlines_what_the_status_has() {
        let mut t = task();
        t.ttl_ms = None;
        let v = serde_json::to_value(GetTaskResult::new(
            t,
            Some(json!({"content": []})),
            None,
            None,
        ))
        .unwrap();
        assert_eq!(v["resultType"], "complete");
        assert_eq!(v["ttlMs"], Value::Null, "ttlMs is always present");
        assert_eq!(v["result"]["content"], json!([]));
        assert!(v.get("error").is_none() && v.get("inputRequests").is_none());
    }
}

//! What a task store holds for one task: its status, its outcome, what it asks the client,
//! the work needed to resume it, and the lease of the replica running it.
//!
//! Imports nothing of the crate but `protocol` (the wire views of a task).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::{GetTaskResult, JsonObject, Task, iso8601};

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Where a task is in its life (the wire's `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// A handler is running it.
    Working,
    /// It waits for the client's answers (`inputRequests`, given with `tasks/update`).
    InputRequired,
    /// It finished with a tool result (possibly one with `isError: true`). Terminal.
    Completed,
    /// It ended with a protocol or internal error, or its replica died. Terminal.
    Failed,
    /// The client cancelled it. Terminal.
    Cancelled,
}

impl TaskStatus {
    /// Whether the status is final: `completed`, `failed` or `cancelled`.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire name (`working`, `input_required`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// The claim of one replica on a running task: it renews `until` while the handler runs; a
/// lease that lapses means the replica is gone, and the task becomes `failed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The replica running the handler (its id, unique per process).
    pub replica: String,
    /// When the lease lapses unless renewed, in Unix milliseconds.
    pub until: u64,
}

/// What resuming a task needs: the tool and its arguments, the handler's own state from its
/// last `input_required` answer, and every answer the client gave so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskWork {
    /// The tool's name.
    pub tool: String,
    /// Its (validated) arguments.
    pub arguments: Value,
    /// The state the handler asked to get back on its next run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// The client's answers so far, by key (those of the `tools/call` that created the task
    /// included).
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub responses: JsonObject,
}

impl TaskWork {
    /// The work of calling `tool` with `arguments`.
    pub fn new(tool: impl Into<String>, arguments: Value) -> Self {
        TaskWork {
            tool: tool.into(),
            arguments,
            ..TaskWork::default()
        }
    }
}

/// One task as a [`TaskStore`](super::TaskStore) keeps it. Stores treat it as an opaque
/// value apart from [`id`](Self::id), [`version`](Self::version), [`status`](Self::status),
/// [`lease`](Self::lease) and [`ttl_ms`](Self::ttl_ms); its JSON (camelCase fields) is what
/// the Redis store writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task id (unguessable; the client's handle).
    pub id: String,
    /// Bumped by one on every change; a store replaces a record only over the version it
    /// was read at.
    pub version: u64,
    /// A digest of the principal that created it (`None`: anonymous).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// Its status.
    pub status: TaskStatus,
    /// A human-readable note on the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Created, in Unix milliseconds.
    pub created_at: u64,
    /// Last status change, in Unix milliseconds.
    pub last_updated_at: u64,
    /// How long the task stays readable after its last change, in milliseconds (the wire's
    /// `ttlMs`).
    pub ttl_ms: u64,
    /// The polling interval suggested to the client, in milliseconds.
    pub poll_interval_ms: u64,
    /// The tool result, once `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error object, once `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// What the task asks the client, by key, while `input_required` (each value is
    /// `{method, params}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, Value>,
    /// What resuming it needs.
    pub work: TaskWork,
    /// The lease of the replica running it, while `working`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
}

impl TaskRecord {
    /// A new `working` task (version 1) created now.
    pub fn new(id: impl Into<String>, work: TaskWork, ttl_ms: u64, poll_interval_ms: u64) -> Self {
        let now = now_ms();
        TaskRecord {
            id: id.into(),
            version: 1,
            principal: None,
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl_ms,
            poll_interval_ms,
            result: None,
            error: None,
            input_requests: BTreeMap::new(),
            work,
            lease: None,
        }
    }

    /// Sets the creating principal's digest.
    #[must_use]
    pub fn with_principal(mut self, principal: Option<String>) -> Self {
        self.principal = principal;
        self
    }

    /// Sets the lease.
    #[must_use]
    pub fn with_lease(mut self, lease: Option<Lease>) -> Self {
        self.lease = lease;
        self
    }

    /// Moves to `status` now: bumps [`last_updated_at`](Self::last_updated_at); leaving
    /// `working` drops the lease, leaving `input_required` drops the input requests.
    pub fn set_status(&mut self, status: TaskStatus) {
        if status != self.status {
            self.last_updated_at = now_ms().max(self.last_updated_at);
        }
        if status != TaskStatus::Working {
            self.lease = None;
        }
        if status != TaskStatus::InputRequired {
            self.input_requests.clear();
        }
        self.status = status;
    }

    /// Whether its lease lapsed before `now_ms` while it is `working`.
    pub fn lease_lapsed(&self, now_ms: u64) -> bool {
        self.status == TaskStatus::Working && self.lease.as_ref().is_some_and(|l| l.until < now_ms)
    }

    /// The task as clients see it.
    pub fn to_wire(&self) -> Task {
        Task {
            task_id: self.id.clone(),
            status: self.status.as_str().to_owned(),
            status_message: self.status_message.clone(),
            created_at: iso8601(self.created_at),
            last_updated_at: iso8601(self.last_updated_at),
            ttl_ms: Some(self.ttl_ms.max(1)),
            poll_interval_ms: Some(self.poll_interval_ms.max(1)),
        }
    }

    /// The `tasks/get` view: the task, and what its status has (the tool result when
    /// completed, the error when failed, the input requests when waiting for input).
    pub fn to_detailed(&self) -> GetTaskResult {
        let input = (self.status == TaskStatus::InputRequired).then(|| self.input_requests.clone());
        let result = (self.status == TaskStatus::Completed)
            .then(|| self.result.clone())
            .flatten();
        let error = (self.status == TaskStatus::Failed)
            .then(|| self.error.clone())
            .flatten();
        GetTaskResult::new(self.to_wire(), result, error, input)
    }

    /// When a store may forget it: [`ttl_ms`](Self::ttl_ms) after `written_at_ms` (the time
    /// of the write), but never before its lease lapses.
    pub fn expires_at(&self, written_at_ms: u64) -> u64 {
        let keep = written_at_ms.saturating_add(self.ttl_ms.max(1));
        self.lease.as_ref().map_or(keep, |l| keep.max(l.until))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn status_changes_drop_what_no_longer_applies() {
        let mut t = TaskRecord::new("t", TaskWork::new("x", json!({})), 1_000, 100).with_lease(
            Some(Lease {
                replica: "r".into(),
                until: 5,
            }),
        );
        assert!(t.lease_lapsed(6));
        assert!(!t.lease_lapsed(5));
        t.input_requests.insert("k".into(), json!({}));
        t.set_status(TaskStatus::InputRequired);
        assert!(t.lease.is_none());
        assert!(!t.input_requests.is_empty());
        t.set_status(TaskStatus::Completed);
        assert!(t.input_requests.is_empty());
        assert!(t.status.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
        let text = serde_json::to_value(&t).unwrap();
        assert_eq!(text["status"], "completed");
        assert_eq!(text["ttlMs"], 1_000);
        assert_eq!(serde_json::from_value::<TaskRecord>(text).unwrap(), t);
    }

    #[test]
    fn expiry_counts_from_the_write_and_waits_for_the_lease() {
        let t = TaskRecord::new("t", TaskWork::new("x", json!({})), 1_000, 100);
        assert_eq!(t.expires_at(10), 1_010);
        let leased = t.with_lease(Some(Lease {
            replica: "r".into(),
            until: 5_000,
        }));
        assert_eq!(leased.expires_at(10), 5_000);
    }
}

//! The events that travel on a bus.

use serde::{Deserialize, Serialize};

use crate::protocol::Task;

/// A change worth telling listening clients about.
///
/// Serialized as JSON with a `type` tag, e.g. `{"type":"tools_list_changed"}` or
/// `{"type":"resource_updated","uri":"file:///a.txt"}`; that is the format on a
/// cross-replica bus, so other programs can publish changes too.
///
/// | `type` | other fields | becomes, on listen streams that asked for it |
/// |---|---|---|
/// | `tools_list_changed` | | `notifications/tools/list_changed` |
/// | `prompts_list_changed` | | `notifications/prompts/list_changed` |
/// | `resources_list_changed` | | `notifications/resources/list_changed` |
/// | `resource_updated` | `uri` | `notifications/resources/updated` for streams subscribed to `uri` or a parent |
/// | `server_fingerprint` | `tools`, `prompts`, `resources` | the list-changed notification of each list whose fingerprint differs from the receiving replica's |
/// | `session_changed` | `session` | nothing on listen streams; the legacy GET stream of that session re-reads its settings (subscriptions, revocation) from the session store |
/// | `input_answer` | `replica`, `id`, `session`, `answer`, `traceparent`? | nothing on listen streams; the replica named `replica` hands `answer` (the JSON text of a legacy client's response) to the `tools/call` waiting for request `id` of that session |
/// | `task_status` | `task` (the wire `Task`), `principal`?, `traceparent`? | `notifications/tasks` for streams that listed the task's id (and belong to its principal); the replica running the task stops its handler when the status is terminal |
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// A resource's content changed (`notifications/resources/updated`); streams subscribed
    /// to this URI or to a parent of it hear about it.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// A replica announces the versions of its lists, as it does when it starts: a replica
    /// whose lists differ (one running another version of the server, during a rolling
    /// deploy) tells its listen streams that those lists changed.
    ServerFingerprint(ListFingerprints),
    /// A legacy (2025-11-25) session's settings changed (a subscription was added or
    /// removed, or the session ended): the replica holding the session's GET stream re-reads
    /// them from the session store.
    SessionChanged {
        /// The session's store key (the random part sealed inside its id, never the id).
        session: String,
    },
    /// A legacy client's answer to a server-to-client request, received by one replica and
    /// forwarded to the replica holding the stream the request was sent on.
    InputAnswer {
        /// The instance that sent the request (the first part of its id).
        replica: String,
        /// The request id.
        id: String,
        /// The store key of the session that answered; the request must belong to it.
        session: String,
        /// The JSON text of the client's response (`result` or `error`).
        answer: String,
        /// The W3C `traceparent` of the span that received the answer, when traces are
        /// exported (feature `otel`): the replica holding the stream continues that trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        traceparent: Option<String>,
    },
    /// A task's status changed (Tasks extension). This is also how `tasks/cancel` on one
    /// replica reaches the replica running the task.
    TaskStatus(TaskChange),
}

/// What a [`ChangeEvent::TaskStatus`] carries: the task as clients see it (no result or
/// error: a client reads those with `tasks/get`) and a digest of the principal it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskChange {
    /// The task.
    pub task: Task,
    /// The digest of the principal that created it (`None`: anonymous).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The W3C `traceparent` of the span that made the change (a `tasks/cancel` request's),
    /// when traces are exported (feature `otel`): the replica running the task continues
    /// that trace when it stops the handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

impl TaskChange {
    /// The change of `task`, owned by `principal`.
    pub fn new(task: Task, principal: Option<String>) -> Self {
        TaskChange {
            task,
            principal,
            traceparent: None,
        }
    }

    /// Whether the task reached a terminal status.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self.task.status.as_str(),
            "completed" | "failed" | "cancelled"
        )
    }
}

/// Digests of a server's tool, prompt and resource lists (resources and resource templates
/// together): equal digests mean equal lists. Computed when the server is built
/// ([`Server::list_fingerprints`](crate::Server::list_fingerprints)).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ListFingerprints {
    /// Digest of the tool list.
    pub tools: String,
    /// Digest of the prompt list.
    pub prompts: String,
    /// Digest of the resource and resource-template lists.
    pub resources: String,
}

impl ChangeEvent {
    /// The notification method this event becomes on a listen stream; `None` for a
    /// [`ChangeEvent::ServerFingerprint`], which may become several or none.
    pub fn notification_method(&self) -> Option<&'static str> {
        use crate::protocol::{
            PROMPTS_LIST_CHANGED, RESOURCES_LIST_CHANGED, RESOURCES_UPDATED, TOOLS_LIST_CHANGED,
        };
        Some(match self {
            ChangeEvent::ToolsListChanged => TOOLS_LIST_CHANGED,
            ChangeEvent::PromptsListChanged => PROMPTS_LIST_CHANGED,
            ChangeEvent::ResourcesListChanged => RESOURCES_LIST_CHANGED,
            ChangeEvent::ResourceUpdated { .. } => RESOURCES_UPDATED,
            ChangeEvent::ServerFingerprint(_)
            | ChangeEvent::SessionChanged { .. }
            | ChangeEvent::InputAnswer { .. } => return None,
            ChangeEvent::TaskStatus(_) => crate::protocol::TASKS_NOTIFICATION,
        })
    }

    /// A fixed label for the event's type (for metrics): its notification method, or its
    /// `type` tag when it becomes no single notification.
    pub fn kind(&self) -> &'static str {
        match self {
            ChangeEvent::ServerFingerprint(_) => "server_fingerprint",
            ChangeEvent::SessionChanged { .. } => "session_changed",
            ChangeEvent::InputAnswer { .. } => "input_answer",
            other => other.notification_method().unwrap_or("other"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_format_is_documented_json() {
        let e = ChangeEvent::ResourceUpdated {
            uri: "file:///a".into(),
        };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"type":"resource_updated","uri":"file:///a"}"#);
        assert_eq!(serde_json::from_str::<ChangeEvent>(&text).unwrap(), e);
        assert_eq!(
            serde_json::to_string(&ChangeEvent::ToolsListChanged).unwrap(),
            r#"{"type":"tools_list_changed"}"#
        );
        assert!(serde_json::from_str::<ChangeEvent>(r#"{"type":"nope"}"#).is_err());
        let fp = ChangeEvent::ServerFingerprint(ListFingerprints {
            tools: "a1".into(),
            prompts: "b2".into(),
            resources: "c3".into(),
        });
        let text = serde_json::to_string(&fp).unwrap();
        assert_eq!(
            text,
            r#"{"type":"server_fingerprint","tools":"a1","prompts":"b2","resources":"c3"}"#
        );
        assert_eq!(serde_json::from_str::<ChangeEvent>(&text).unwrap(), fp);
        let answer = ChangeEvent::InputAnswer {
            replica: "r1".into(),
            id: "r1.7".into(),
            session: "s".into(),
            answer: r#"{"result":{}}"#.into(),
            traceparent: None,
        };
        let text = serde_json::to_string(&answer).unwrap();
        assert_eq!(
            text,
            r#"{"type":"input_answer","replica":"r1","id":"r1.7","session":"s","answer":"{\"result\":{}}"}"#
        );
        assert_eq!(answer.kind(), "input_answer");
        assert_eq!(
            serde_json::to_string(&ChangeEvent::SessionChanged {
                session: "k".into()
            })
            .unwrap(),
            r#"{"type":"session_changed","session":"k"}"#
        );
    }
}

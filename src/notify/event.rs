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
/// | `tools_list_changed` | `traceparent`? | `notifications/tools/list_changed` |
/// | `prompts_list_changed` | `traceparent`? | `notifications/prompts/list_changed` |
/// | `resources_list_changed` | `traceparent`? | `notifications/resources/list_changed` |
/// | `resource_updated` | `uri`, `traceparent`? | `notifications/resources/updated` for streams subscribed to `uri` or a parent |
/// | `server_fingerprint` | `tools`, `prompts`, `resources` | the list-changed notification of each list whose fingerprint differs from the receiving replica's |
/// | `session_changed` | `session` | nothing on listen streams; the legacy GET stream of that session re-reads its settings (subscriptions, revocation) from the session store |
/// | `input_answer` | `replica`, `id`, `session`, `answer`, `traceparent`? | nothing on listen streams; the replica named `replica` hands `answer` (the JSON text of a legacy client's response) to the `tools/call` waiting for request `id` of that session |
/// | `task_status` | `task` (the wire `Task`), `principal`?, `traceparent`? | `notifications/tasks` for streams that listed the task's id (and belong to its principal); the replica running the task stops its handler when the status is terminal |
///
/// A field marked `?` is optional: absent when empty, and ignored by a replica that does
/// not know it, so replicas of different versions share a bus. `traceparent` is the W3C
/// trace context of the span that published the event, present only when traces are
/// exported (feature `otel`): the replica that acts on the event does so in a span of the
/// same trace; a publisher outside the server may leave it out. In Rust, build the list
/// events with [`ChangeEvent::tools_list_changed`] and its siblings (no trace context:
/// [`Notifier::publish`](crate::notify::Notifier::publish) adds it).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged {
        /// The W3C `traceparent` of the span that published the change, when traces are
        /// exported (feature `otel`): listen and GET streams deliver it in that trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        traceparent: Option<String>,
    },
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsListChanged {
        /// The W3C `traceparent` of the span that published the change, when traces are
        /// exported (feature `otel`): listen and GET streams deliver it in that trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        traceparent: Option<String>,
    },
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesListChanged {
        /// The W3C `traceparent` of the span that published the change, when traces are
        /// exported (feature `otel`): listen and GET streams deliver it in that trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        traceparent: Option<String>,
    },
    /// A resource's content changed (`notifications/resources/updated`); streams subscribed
    /// to this URI or to a parent of it hear about it.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
        /// The W3C `traceparent` of the span that published the change, when traces are
        /// exported (feature `otel`): listen and GET streams deliver it in that trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        traceparent: Option<String>,
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
    /// `tools_list_changed`.
    pub fn tools_list_changed() -> Self {
        ChangeEvent::ToolsListChanged { traceparent: None }
    }

    /// `prompts_list_changed`.
    pub fn prompts_list_changed() -> Self {
        ChangeEvent::PromptsListChanged { traceparent: None }
    }

    /// `resources_list_changed`.
    pub fn resources_list_changed() -> Self {
        ChangeEvent::ResourcesListChanged { traceparent: None }
    }

    /// `resource_updated` for `uri`.
    pub fn resource_updated(uri: impl Into<String>) -> Self {
        ChangeEvent::ResourceUpdated {
            uri: uri.into(),
            traceparent: None,
        }
    }

    /// The trace context the event carries, if any.
    pub(crate) fn traceparent(&self) -> Option<&str> {
        match self {
            ChangeEvent::ToolsListChanged { traceparent }
            | ChangeEvent::PromptsListChanged { traceparent }
            | ChangeEvent::ResourcesListChanged { traceparent }
            | ChangeEvent::ResourceUpdated { traceparent, .. }
            | ChangeEvent::InputAnswer { traceparent, .. }
            | ChangeEvent::TaskStatus(TaskChange { traceparent, .. }) => traceparent.as_deref(),
            ChangeEvent::ServerFingerprint(_) | ChangeEvent::SessionChanged { .. } => None,
        }
    }

    /// Where the event keeps its trace context; `None` for an event that carries none.
    pub(crate) fn traceparent_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            ChangeEvent::ToolsListChanged { traceparent }
            | ChangeEvent::PromptsListChanged { traceparent }
            | ChangeEvent::ResourcesListChanged { traceparent }
            | ChangeEvent::ResourceUpdated { traceparent, .. }
            | ChangeEvent::InputAnswer { traceparent, .. }
            | ChangeEvent::TaskStatus(TaskChange { traceparent, .. }) => Some(traceparent),
            ChangeEvent::ServerFingerprint(_) | ChangeEvent::SessionChanged { .. } => None,
        }
    }

    /// The span a replica hands this event to its streams in (`mcp.bus.deliver`, a
    /// consumer span): one continuing the trace of the replica that published it, or no
    /// span at all when the event carries no trace context (traces are not exported).
    pub(crate) fn delivery_span(&self) -> tracing::Span {
        let Some(traceparent) = self.traceparent() else {
            return tracing::Span::none();
        };
        let span = tracing::debug_span!(
            "mcp.bus.deliver",
            otel.kind = "consumer",
            messaging.operation.type = "process",
            mcp.bus.event = self.kind(),
        );
        crate::observability::continue_trace(&span, Some(traceparent));
        span
    }

    /// The notification method this event becomes on a listen stream; `None` for a
    /// [`ChangeEvent::ServerFingerprint`], which may become several or none.
    pub fn notification_method(&self) -> Option<&'static str> {
        use crate::protocol::{
            PROMPTS_LIST_CHANGED, RESOURCES_LIST_CHANGED, RESOURCES_UPDATED, TOOLS_LIST_CHANGED,
        };
        Some(match self {
            ChangeEvent::ToolsListChanged { .. } => TOOLS_LIST_CHANGED,
            ChangeEvent::PromptsListChanged { .. } => PROMPTS_LIST_CHANGED,
            ChangeEvent::ResourcesListChanged { .. } => RESOURCES_LIST_CHANGED,
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
        let e = ChangeEvent::resource_updated("file:///a");
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"type":"resource_updated","uri":"file:///a"}"#);
        assert_eq!(serde_json::from_str::<ChangeEvent>(&text).unwrap(), e);
        assert_eq!(
            serde_json::to_string(&ChangeEvent::tools_list_changed()).unwrap(),
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

    /// What a replica of the version before `traceparent` sends on list changes, and reads.
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Older {
        ToolsListChanged,
        ResourceUpdated { uri: String },
    }

    #[test]
    fn the_trace_context_of_a_list_change_is_optional_both_ways() {
        const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut traced = ChangeEvent::tools_list_changed();
        *traced.traceparent_mut().unwrap() = Some(TP.into());
        let text = serde_json::to_string(&traced).unwrap();
        assert_eq!(
            text,
            format!(r#"{{"type":"tools_list_changed","traceparent":"{TP}"}}"#)
        );
        assert_eq!(serde_json::from_str::<ChangeEvent>(&text).unwrap(), traced);
        assert_eq!(traced.traceparent(), Some(TP));
        // An older replica ignores it ...
        assert_eq!(
            serde_json::from_str::<Older>(&text).unwrap(),
            Older::ToolsListChanged
        );
        let mut updated = ChangeEvent::resource_updated("file:///a");
        *updated.traceparent_mut().unwrap() = Some(TP.into());
        let text = serde_json::to_string(&updated).unwrap();
        assert_eq!(
            serde_json::from_str::<Older>(&text).unwrap(),
            Older::ResourceUpdated {
                uri: "file:///a".into()
            }
        );
        // ... and a newer one reads what an older one sends.
        let read = |t: &str| serde_json::from_str::<ChangeEvent>(t).unwrap();
        assert_eq!(
            read(r#"{"type":"prompts_list_changed"}"#),
            ChangeEvent::prompts_list_changed()
        );
        assert_eq!(
            read(r#"{"type":"resources_list_changed"}"#),
            ChangeEvent::resources_list_changed()
        );
        assert_eq!(
            read(r#"{"type":"resource_updated","uri":"u"}"#).traceparent(),
            None
        );
        // Events that carry none have no place for one.
        assert!(
            ChangeEvent::SessionChanged {
                session: "k".into()
            }
            .traceparent_mut()
            .is_none()
        );
    }
}

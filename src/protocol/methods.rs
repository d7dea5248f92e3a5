//! Method names of this revision, and the ones it removed.

/// `server/discover`.
pub(crate) const DISCOVER: &str = "server/discover";
/// `tools/list`.
pub(crate) const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub(crate) const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub(crate) const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub(crate) const RESOURCE_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub(crate) const RESOURCES_READ: &str = "resources/read";
/// `prompts/list`.
pub(crate) const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub(crate) const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub(crate) const COMPLETION_COMPLETE: &str = "completion/complete";
/// `subscriptions/listen`.
pub(crate) const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// Methods of earlier revisions (and of the Tasks extension) that this one removed; a modern
/// server answers `-32601`.
pub(crate) const REMOVED: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/result",
    "tasks/list",
];

/// The methods of the Tasks extension (`io.modelcontextprotocol/tasks`); `-32601` from a
/// server without task-capable tools.
pub(crate) const TASKS: &[&str] = &[super::TASKS_GET, super::TASKS_UPDATE, super::TASKS_CANCEL];

/// The methods whose HTTP request must carry `Mcp-Name`, and the params field it mirrors.
pub(crate) fn name_field(method: &str) -> Option<&'static str> {
    match method {
        TOOLS_CALL | PROMPTS_GET => Some("name"),
        RESOURCES_READ => Some("uri"),
        super::TASKS_GET | super::TASKS_UPDATE | super::TASKS_CANCEL => Some("taskId"),
        _ => None,
    }
}

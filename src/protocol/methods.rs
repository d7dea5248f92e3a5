//! Method names of this revision, and the ones it removed.

/// `server/discover`.
pub const DISCOVER: &str = "server/discover";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCE_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `subscriptions/listen`.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// Methods of earlier revisions (and of the Tasks extension) that this one removed; a modern
/// server answers `-32601`.
pub const REMOVED: &[&str] = &[
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
pub const TASKS: &[&str] = &[super::TASKS_GET, super::TASKS_UPDATE, super::TASKS_CANCEL];

/// The methods whose HTTP request must carry `Mcp-Name`, and the params field it mirrors.
pub fn name_field(method: &str) -> Option<&'static str> {
    match method {
        TOOLS_CALL | PROMPTS_GET => Some("name"),
        RESOURCES_READ => Some("uri"),
        super::TASKS_GET | super::TASKS_UPDATE | super::TASKS_CANCEL => Some("taskId"),
        _ => None,
    }
}

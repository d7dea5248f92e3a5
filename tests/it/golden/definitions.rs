//! Tool, resource, resource-template and prompt definitions and their list results.

use serde_json::json;
use stateless_mcp::protocol::{
    CachePolicy, CacheScope, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, Prompt, PromptArgument, Resource, ResourceTemplate, Tool, ToolAnnotations,
};

use super::{
    annotations, annotations_json, full_resource, full_resource_json, golden, golden_result, icon,
    icon_json, object, server_info_json, stamped,
};

#[test]
fn tool_definitions() {
    let schema = object(
        json!({"type": "object", "properties": {"text": {"type": "string"}},
                               "required": ["text"], "additionalProperties": false}),
    );
    let minimal = Tool::new("echo", schema.clone());
    golden(
        "Tool",
        &minimal,
        &json!({"name": "echo", "inputSchema": schema}),
    );

    let mut hints = ToolAnnotations::default();
    hints.title = Some("Echo (hint)".into());
    hints.read_only_hint = Some(true);
    hints.destructive_hint = Some(false);
    hints.idempotent_hint = Some(true);
    hints.open_world_hint = Some(false);
    let mut full = Tool::new("echo", schema.clone());
    full.title = Some("Echo".into());
    full.description = Some("Returns its input".into());
    full.output_schema = Some(object(
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    ));
    full.annotations = Some(hints);
    full.icons = Some(vec![icon()]);
    full.meta = Some(object(json!({"com.example/tier": "free"})));
    let full_json = json!({"name": "echo", "title": "Echo", "description": "Returns its input",
        "inputSchema": schema,
        "outputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": {"title": "Echo (hint)", "readOnlyHint": true, "destructiveHint": false,
                        "idempotentHint": true, "openWorldHint": false},
        "icons": [icon_json()], "_meta": {"com.example/tier": "free"}});
    golden("Tool", &full, &full_json);

    let mut page = ListToolsResult::new(
        vec![minimal, full],
        Some("opaque-cursor".into()),
        CachePolicy::new(60_000, CacheScope::Private),
    );
    page.meta = stamped();
    golden_result(
        "ListToolsResult",
        &page,
        &json!({"resultType": "complete",
                "tools": [{"name": "echo", "inputSchema": schema}, full_json],
                "nextCursor": "opaque-cursor", "ttlMs": 60000, "cacheScope": "private",
                "_meta": server_info_json()}),
    );
    golden_result(
        "ListToolsResult",
        &ListToolsResult::new(vec![], None, CachePolicy::default()),
        &json!({"resultType": "complete", "tools": [], "ttlMs": 60000, "cacheScope": "public"}),
    );
}

#[test]
fn resource_definitions() {
    golden(
        "Resource",
        &Resource::new("file:///a", "a"),
        &json!({"uri": "file:///a", "name": "a"}),
    );
    golden("Resource", &full_resource(), &full_resource_json());

    let mut page = ListResourcesResult::new(
        vec![full_resource()],
        Some(String::new()),
        CachePolicy::new(1, CacheScope::Public),
    );
    page.meta = stamped();
    golden_result(
        "ListResourcesResult",
        &page,
        &json!({"resultType": "complete", "resources": [full_resource_json()],
                "nextCursor": "", "ttlMs": 1, "cacheScope": "public",
                "_meta": server_info_json()}),
    );

    let minimal = ResourceTemplate::new("demo://greeting/{name}", "greeting");
    let minimal_json = json!({"uriTemplate": "demo://greeting/{name}", "name": "greeting"});
    golden("ResourceTemplate", &minimal, &minimal_json);
    let mut full = ResourceTemplate::new("file:///{path}", "files");
    full.title = Some("Files".into());
    full.description = Some("Any project file".into());
    full.mime_type = Some("application/octet-stream".into());
    full.icons = Some(vec![icon()]);
    full.annotations = Some(annotations());
    full.meta = Some(object(json!({"com.example/x": true})));
    let full_json = json!({"uriTemplate": "file:///{path}", "name": "files", "title": "Files",
        "description": "Any project file", "mimeType": "application/octet-stream",
        "icons": [icon_json()], "annotations": annotations_json(), "_meta": {"com.example/x": true}});
    golden("ResourceTemplate", &full, &full_json);
    golden_result(
        "ListResourceTemplatesResult",
        &ListResourceTemplatesResult::new(vec![minimal, full], None, CachePolicy::default()),
        &json!({"resultType": "complete", "resourceTemplates": [minimal_json, full_json],
                "ttlMs": 60000, "cacheScope": "public"}),
    );
}

#[test]
fn prompt_definitions() {
    let minimal = Prompt::new("greet");
    golden("Prompt", &minimal, &json!({"name": "greet"}));

    let mut arg = PromptArgument::new("name", true).with_description("Who to greet");
    arg.title = Some("Name".into());
    golden(
        "PromptArgument",
        &arg,
        &json!({"name": "name", "title": "Name", "description": "Who to greet", "required": true}),
    );
    let mut full = Prompt::new("greet");
    full.title = Some("Greeting".into());
    full.description = Some("Greets someone".into());
    full.arguments = Some(vec![arg, PromptArgument::new("style", false)]);
    full.icons = Some(vec![icon()]);
    full.meta = Some(object(json!({"com.example/lang": "en"})));
    let full_json = json!({"name": "greet", "title": "Greeting", "description": "Greets someone",
        "arguments": [{"name": "name", "title": "Name", "description": "Who to greet", "required": true},
                      {"name": "style", "required": false}],
        "icons": [icon_json()], "_meta": {"com.example/lang": "en"}});
    golden("Prompt", &full, &full_json);

    let mut page = ListPromptsResult::new(
        vec![minimal, full],
        Some("next".into()),
        CachePolicy::new(5_000, CacheScope::Public),
    );
    page.meta = stamped();
    golden_result(
        "ListPromptsResult",
        &page,
        &json!({"resultType": "complete", "prompts": [{"name": "greet"}, full_json],
                "nextCursor": "next", "ttlMs": 5000, "cacheScope": "public",
                "_meta": server_info_json()}),
    );
}

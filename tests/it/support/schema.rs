//! Validates every message the server emits against the official 2026-07-28 JSON Schema.
//!
//! The schema is the spec's file and is not committed. It is read from `MCP_SCHEMA_JSON`,
//! else `../shared/spec/2026-07-28/schema.json`, else `target/mcp-schema/2026-07-28/schema.json`
//! (where `scripts/test.sh` fetches it). Without any of them the tests fail, saying so.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

struct Schema {
    root: Value,
    notification_defs: HashMap<String, String>,
    compiled: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

fn schema_path() -> PathBuf {
    if let Ok(p) = std::env::var("MCP_SCHEMA_JSON") {
        return PathBuf::from(p);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        root.join("../shared/spec/2026-07-28/schema.json"),
        root.join("target/mcp-schema/2026-07-28/schema.json"),
    ];
    for c in &candidates {
        if c.exists() {
            return c.clone();
        }
    }
    panic!(
        "the MCP 2026-07-28 schema.json was not found (looked at $MCP_SCHEMA_JSON, {}); \
         run scripts/test.sh, which fetches it into target/mcp-schema/, or set MCP_SCHEMA_JSON",
        candidates
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

fn schema() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| {
        let path = schema_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let root: Value = serde_json::from_str(&text).expect("schema.json is JSON");
        let mut notification_defs = HashMap::new();
        for (name, def) in root["$defs"].as_object().expect("$defs") {
            if let Some(m) = def
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            {
                if name.ends_with("Notification") {
                    notification_defs.insert(m.to_owned(), name.clone());
                }
            }
        }
        Schema {
            root,
            notification_defs,
            compiled: Mutex::new(HashMap::new()),
        }
    })
}

fn validator(def: &str) -> Arc<jsonschema::Validator> {
    let s = schema();
    let mut cache = s.compiled.lock().unwrap();
    cache
        .entry(def.to_owned())
        .or_insert_with(|| {
            assert!(
                s.root["$defs"].get(def).is_some(),
                "schema has no $defs/{def}"
            );
            let mut root = s.root.clone();
            root["$ref"] = Value::from(format!("#/$defs/{def}"));
            Arc::new(
                jsonschema::options()
                    .should_validate_formats(false)
                    .build(&root)
                    .unwrap_or_else(|e| panic!("compiling $defs/{def}: {e}")),
            )
        })
        .clone()
}

/// Asserts `value` is valid against `$defs/<def>`.
pub fn assert_valid(def: &str, value: &Value) {
    let v = validator(def);
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "message is not a valid {def}: {errors:?}\n{value}"
    );
}

/// The result definition for a request method.
pub fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => return None,
    })
}

/// Validates one server-to-client message; `method` is the request it answers, if known.
pub fn check_message(message: &Value, method: Option<&str>) {
    if let Some(m) = message.get("method").and_then(Value::as_str) {
        assert!(
            message.get("id").is_none(),
            "the server sent a request on a stream: {message}"
        );
        let def = schema()
            .notification_defs
            .get(m)
            .unwrap_or_else(|| panic!("no schema notification for {m}: {message}"));
        assert_valid(def, message);
        return;
    }
    if let Some(err) = message.get("error") {
        let def = match err.get("code").and_then(Value::as_i64) {
            Some(-32020) => "HeaderMismatchError",
            Some(-32021) => "MissingRequiredClientCapabilityError",
            Some(-32022) => "UnsupportedProtocolVersionError",
            _ => "JSONRPCErrorResponse",
        };
        assert_valid(def, message);
        return;
    }
    assert_valid("JSONRPCResultResponse", message);
    let result = &message["result"];
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        assert_valid("InputRequiredResult", result);
    } else if let Some(def) = method.and_then(result_def) {
        assert_valid(def, result);
    }
}

//! Validates every message the server emits against the official JSON Schema of its era:
//! 2026-07-28 ([`check_message`], [`assert_valid`]) and, for legacy clients, 2025-11-25
//! ([`check_legacy_message`], [`assert_valid_legacy`]), whose results must also carry only
//! the members that revision defines ([`assert_legacy_members`]). The Skills extension's
//! results, which no schema file defines, are checked against its shapes
//! ([`assert_skills_result`]).
//!
//! The schemas are the spec's files and are not committed. Each is read from an environment
//! variable (`MCP_SCHEMA_JSON`, `MCP_LEGACY_SCHEMA_JSON`), else
//! `../shared/spec/<version>/schema.json`, else `target/mcp-schema/<version>/schema.json`
//! (where `scripts/provision.sh schemas` fetches them). When either is missing, the first
//! test that needs a schema stops the whole test binary at once with one message saying how
//! to get them ([`require_schemas`]), rather than every test failing on its own.
//!
//! The fuzz targets check their answers with this same file (`src/fuzzing.rs` includes it
//! with `#[path]` under the `fuzzing` feature), so it uses nothing but std, serde_json and
//! jsonschema.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

struct Schema {
    root: Value,
    notification_defs: HashMap<String, String>,
    compiled: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

/// One era's schema file: where to find it.
struct Era {
    version: &'static str,
    env: &'static str,
}

const CURRENT: Era = Era {
    version: "2026-07-28",
    env: "MCP_SCHEMA_JSON",
};
const LEGACY: Era = Era {
    version: "2025-11-25",
    env: "MCP_LEGACY_SCHEMA_JSON",
};

/// Where `era`'s schema file is, or what was looked at.
fn locate(era: &Era) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(era.env) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("${} = {} (no such file)", era.env, p.display()))
        };
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        root.join(format!("../shared/spec/{}/schema.json", era.version)),
        root.join(format!("target/mcp-schema/{}/schema.json", era.version)),
    ];
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .ok_or_else(|| {
            let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
            format!("${} (unset), {}", era.env, looked.join(", "))
        })
}

/// Both schemas are there, or the test binary stops now with one message: every message a
/// test receives is validated against them, so without them each test would fail on its
/// own (hundreds of identical failures hiding the cause). Checked once, by the first test
/// that needs a schema. The message goes to the process's stderr directly: libtest keeps a
/// test's `eprintln!` to itself.
fn require_schemas() {
    static CHECKED: OnceLock<()> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let missing: Vec<String> = [&CURRENT, &LEGACY]
            .into_iter()
            .filter_map(|era| {
                locate(era)
                    .err()
                    .map(|looked| format!("  - {} (looked at {looked})", era.version))
            })
            .collect();
        if missing.is_empty() {
            return;
        }
        let message = format!(
            "\nThe official MCP JSON schemas are missing, so the tests stop here:\n{}\n\n\
             Every message the tests receive is checked against them; they are the spec's \
             files and not committed. Get both with\n\n    bash scripts/provision.sh schemas\n\n\
             (it fetches schema/2026-07-28/schema.json and schema/2025-11-25/schema.json from \
             github.com/modelcontextprotocol/modelcontextprotocol into target/mcp-schema/), \
             or set MCP_SCHEMA_JSON and MCP_LEGACY_SCHEMA_JSON to copies of those files.\n",
            missing.join("\n")
        );
        use std::io::Write as _;
        let _ = std::io::stderr().write_all(message.as_bytes());
        std::process::exit(2);
    });
}

fn load(era: &Era) -> Schema {
    require_schemas();
    let path = locate(era).expect("checked by require_schemas");
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
}

fn schema() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| load(&CURRENT))
}

fn legacy_schema() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| load(&LEGACY))
}

fn validator_in(s: &Schema, def: &str) -> Arc<jsonschema::Validator> {
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

fn assert_valid_in(s: &Schema, era: &str, def: &str, value: &Value) {
    let v = validator_in(s, def);
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "message is not a valid {era} {def}: {errors:?}\n{value}"
    );
}

/// Asserts `value` is valid against `$defs/<def>` of the 2026-07-28 schema.
pub fn assert_valid(def: &str, value: &Value) {
    assert_valid_in(schema(), "2026-07-28", def, value);
}

/// Asserts `value` is valid against `$defs/<def>` of the 2025-11-25 schema.
pub fn assert_valid_legacy(def: &str, value: &Value) {
    assert_valid_in(legacy_schema(), "2025-11-25", def, value);
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
        // The Tasks extension's notification has no definition in the core schema: it is
        // checked as a generic notification (as the conformance suite does).
        let def = match schema().notification_defs.get(m) {
            Some(def) => def.as_str(),
            None if m == "notifications/tasks" => "JSONRPCNotification",
            None => panic!("no schema notification for {m}: {message}"),
        };
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
    let result_type = result.get("resultType").and_then(Value::as_str);
    if result_type == Some("input_required") {
        assert_valid("InputRequiredResult", result);
    } else if result_type == Some("task") {
        // A CreateTaskResult (Tasks extension): no definition in the core schema; the tasks
        // tests check its fields, and the inlined tool result of `tasks/get` against
        // CallToolResult.
    } else if let Some(def) = method.and_then(result_def) {
        assert_valid(def, result);
    } else if let Some(m @ ("skills/list" | "skills/get")) = method {
        assert_skills_result(m, result, true);
    }
}

/// The 2025-11-25 `_meta` key no legacy result carries (2026-07-28 names the server there).
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The members `$defs/<def>` of `s` defines (following one `$ref`).
fn defined_members(s: &Schema, def: &str) -> Vec<String> {
    let mut d = &s.root["$defs"][def];
    if let Some(r) = d.get("$ref").and_then(Value::as_str) {
        d = &s.root["$defs"][r.trim_start_matches("#/$defs/")];
    }
    d["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The strict pass over a legacy result: every member is one the 2025-11-25 definition
/// `def` defines (so none that only 2026-07-28 defines, such as `resultType`, `ttlMs` or
/// `cacheScope`, although the 2025-11-25 schema lets results carry extra members), its
/// `_meta` has no `serverInfo`, and `initialize` advertises only 2025-11-25 capabilities
/// (with `extensions` holding only the Skills extension, whose backport reads it there).
pub fn assert_legacy_members(def: &str, result: &Value) {
    let s = legacy_schema();
    let defined = defined_members(s, def);
    let obj = result
        .as_object()
        .unwrap_or_else(|| panic!("a result is an object: {result}"));
    for key in obj.keys() {
        assert!(
            defined.contains(key),
            "a 2025-11-25 {def} carries {key:?}, which that revision does not define: {result}"
        );
    }
    if let Some(meta) = result.get("_meta") {
        assert!(
            meta.get(SERVER_INFO_KEY).is_none(),
            "a 2025-11-25 {def} carries {SERVER_INFO_KEY} in _meta: {result}"
        );
    }
    if def == "InitializeResult" {
        let caps = &result["capabilities"];
        let defined = defined_members(s, "ServerCapabilities");
        for key in caps.as_object().expect("capabilities").keys() {
            assert!(
                defined.contains(key) || key == "extensions",
                "initialize advertises {key:?}, which 2025-11-25 does not define: {caps}"
            );
        }
        if let Some(ext) = caps.get("extensions") {
            for id in ext.as_object().expect("extensions is an object").keys() {
                assert_eq!(
                    id, "io.modelcontextprotocol/skills",
                    "initialize advertises an extension 2025-11-25 clients cannot use: {caps}"
                );
            }
        }
    }
}

/// Precise shape of a Skills extension result (`skills/list`, `skills/get`), which no
/// official schema file defines: as the extension specifies it (SEP-2640), the entries
/// strict, the front matter open. On 2026-07-28 (`modern`) the result is a cacheable
/// `complete` result; on 2025-11-25 it has no `resultType`, `ttlMs` nor `cacheScope`.
pub fn assert_skills_result(method: &str, result: &Value, modern: bool) {
    let entry = serde_json::json!({
        "type": "object", "additionalProperties": false,
        "required": ["uri", "frontmatter", "resources"],
        "properties": {
            "uri": {"type": "string", "pattern": "^[a-z][a-z0-9+.-]*://.+/SKILL\\.md$"},
            "frontmatter": {
                "type": "object", "required": ["name", "description"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$", "maxLength": 64},
                    "description": {"type": "string", "minLength": 1, "maxLength": 1024}
                }
            },
            "resources": {"oneOf": [
                {"const": "dynamic"},
                {"type": "array", "minItems": 1, "maxItems": 512, "items": {
                    "type": "object", "additionalProperties": false,
                    "required": ["uri", "digest", "size"],
                    "properties": {
                        "uri": {"type": "string"},
                        "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                        "size": {"type": "integer", "minimum": 0}
                    }
                }}
            ]},
            "_meta": {"type": "object"}
        }
    });
    let (body_key, body) = match method {
        "skills/list" => (
            "skills",
            serde_json::json!({"type": "array", "items": entry}),
        ),
        "skills/get" => ("skill", entry),
        other => panic!("{other} is not a Skills extension method"),
    };
    let mut properties = serde_json::json!({body_key: body, "_meta": {"type": "object"}});
    let mut required = vec![body_key];
    if method == "skills/list" {
        properties["nextCursor"] = serde_json::json!({"type": "string"});
    }
    if modern {
        properties["resultType"] = serde_json::json!({"const": "complete"});
        properties["ttlMs"] = serde_json::json!({"type": "integer", "minimum": 0});
        properties["cacheScope"] = serde_json::json!({"enum": ["public", "private"]});
        required.extend(["resultType", "ttlMs", "cacheScope"]);
    }
    let schema = serde_json::json!({
        "type": "object", "additionalProperties": false,
        "required": required, "properties": properties
    });
    let v = jsonschema::validator_for(&schema).expect("the Skills result schema compiles");
    let errors: Vec<String> = v
        .iter_errors(result)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    let era = if modern { "2026-07-28" } else { "2025-11-25" };
    assert!(
        errors.is_empty(),
        "not a valid {era} {method} result: {errors:?}\n{result}"
    );
    // Each entry's files are its own: SKILL.md first, the others below its directory.
    let entries = match method {
        "skills/list" => result["skills"].as_array().cloned().unwrap_or_default(),
        _ => vec![result["skill"].clone()],
    };
    for e in entries {
        let uri = e["uri"].as_str().unwrap();
        let root = uri.trim_end_matches("SKILL.md");
        let name = root.trim_end_matches('/').rsplit('/').next().unwrap();
        assert_eq!(
            e["frontmatter"]["name"], name,
            "the last segment of {uri} is its name"
        );
        if let Some(files) = e["resources"].as_array() {
            assert_eq!(files[0]["uri"], uri, "SKILL.md is listed first: {e}");
            for f in files {
                assert!(
                    f["uri"].as_str().unwrap().starts_with(root),
                    "{f} is outside {root}"
                );
            }
        }
    }
}

/// The 2025-11-25 result definition for a request method.
pub fn legacy_result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => {
            "EmptyResult"
        }
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        _ => return None,
    })
}

/// Validates one server-to-client message of the 2025-11-25 wire (a legacy session's POST
/// or GET stream); `method` is the request it answers, if known. Server-to-client requests
/// (elicitation, sampling, roots) are allowed here, and checked as `ServerRequest`s.
pub fn check_legacy_message(message: &Value, method: Option<&str>) {
    let s = legacy_schema();
    if let Some(m) = message.get("method").and_then(Value::as_str) {
        if message.get("id").is_some() {
            assert_valid_legacy("JSONRPCRequest", message);
            assert_valid_legacy("ServerRequest", message);
            return;
        }
        let def = s
            .notification_defs
            .get(m)
            .unwrap_or_else(|| panic!("no 2025-11-25 schema notification for {m}: {message}"));
        assert_valid_legacy(def, message);
        return;
    }
    if message.get("error").is_some() {
        assert_valid_legacy("JSONRPCErrorResponse", message);
        return;
    }
    assert_valid_legacy("JSONRPCResultResponse", message);
    let result = &message["result"];
    if let Some(def) = method.and_then(legacy_result_def) {
        assert_valid_legacy(def, result);
        assert_legacy_members(def, result);
    } else if let Some(m @ ("skills/list" | "skills/get")) = method {
        assert_skills_result(m, result, false);
    } else {
        // Which definition applies is not known: at least none of the members only
        // 2026-07-28 gives results.
        for key in ["resultType", "ttlMs", "cacheScope"] {
            assert!(
                result.get(key).is_none(),
                "a 2025-11-25 result carries {key:?}: {message}"
            );
        }
        assert!(
            result
                .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
                .is_none(),
            "a 2025-11-25 result carries serverInfo in _meta: {message}"
        );
    }
}

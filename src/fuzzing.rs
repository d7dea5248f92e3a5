//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`; not part of the API).
//!
//! Each function feeds attacker-controlled input to one decoder that reads it and checks the
//! decoder's invariant, panicking when it breaks: never a panic inside the decoder, and
//! exactly one schema-valid answer or a clean refusal. [`handle`] drives the whole
//! [`Server::handle`](crate::Server::handle) of a server with the demo and conformance
//! fixtures and validates what it answers against the official 2026-07-28 JSON Schema (read
//! from `MCP_SCHEMA_JSON`, `../shared/spec/2026-07-28/schema.json` or
//! `target/mcp-schema/2026-07-28/schema.json`, as the tests do).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::handler::UriTemplate;
use crate::server::{Outcome, Server, fuzz};

/// The one-pass and the step-by-step reads of a body agree (params, `_meta`, id, errors).
pub fn envelope(body: &[u8]) {
    fuzz::both_reads_agree(body);
}

/// Reads the mirrored headers of an arbitrary header list (as the transport and the
/// resource server do), and checks that `=?base64?…?=` carries any string unchanged.
pub fn mirrored_headers(headers: &[(Vec<u8>, Vec<u8>)], text: &str) {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name), HeaderValue::from_bytes(value)) {
            map.append(n, v);
        }
    }
    let _ = crate::mirrored::mirrored(&map);
    let mut map = HeaderMap::new();
    let encoded = format!("=?base64?{}?=", STANDARD.encode(text));
    map.insert(
        crate::mirrored::NAME,
        HeaderValue::from_str(&encoded).expect("base64 is a valid header value"),
    );
    let read = crate::mirrored::mirrored(&map);
    assert_eq!(read.name.value(), Some(text), "{encoded}");
}

/// A fuzzed `requestState` token never opens; a sealed one opens to itself; a tampered one
/// never opens.
pub fn sealed_state(token: &str, payload: &[u8], flip: usize) {
    fuzz::sealed_round_trip(token, payload, flip);
}

/// A fuzzed legacy session id never opens; an issued one opens; a tampered one never
/// opens; session ids and `requestState` tokens never open as each other.
pub fn session_id(token: &str, version: &str, flip: usize) {
    fuzz::session_round_trip(token, version, flip);
}

/// A cursor resumes within its list or is refused; encoding round-trips.
pub fn cursor(text: &str, offset: usize, len: usize) {
    fuzz::cursor_round_trip(text, offset, len);
}

/// Compiles a URI template (or refuses it) and matches a URI against it; a template
/// without expressions matches exactly itself.
pub fn uri_template(template: &str, uri: &str) {
    let Ok(t) = UriTemplate::parse(template) else {
        return;
    };
    assert_eq!(t.as_str(), template);
    let _ = t.matches(uri);
    if !template.contains(['{', '}']) {
        assert!(t.matches(template).is_some(), "{template:?} matches itself");
        assert_eq!(
            t.matches(uri).is_some(),
            uri == template,
            "{template:?} vs {uri:?}"
        );
    }
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    server: Server,
}

fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        // Paused time: handlers that sleep (progress, `sleep`) finish at once.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime");
        let server = runtime.block_on(async {
            let b = Server::builder().state_keys(
                "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
                    .parse()
                    .expect("the key ring parses"),
            );
            crate::fixtures::conformance(crate::fixtures::demo(b))
                .build()
                .expect("the fixtures build")
        });
        Harness { runtime, server }
    })
}

/// Hands `body` with `headers` to the server; its answer must be exactly one schema-valid
/// message (a notification gets none) whose `id` is the request's when it had a readable
/// one; a listen stream's first message must be schema-valid too. Returns the answer.
pub fn handle(body: &[u8], headers: &[(String, String)]) -> Option<Value> {
    let h = harness();
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            map.append(n, v);
        }
    }
    let mirror = crate::mirrored::mirrored(&map);
    let request: Option<Value> = serde_json::from_slice(body).ok();
    let method = request
        .as_ref()
        .and_then(|r| r.get("method"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = Bytes::copy_from_slice(body);
    let answer = h.runtime.block_on(async {
        match h
            .server
            .handle(&body, Some(&mirror), http::Extensions::new())
        {
            Outcome::Accepted => None,
            Outcome::Ready(reply) => Some(reply.body),
            Outcome::Running(running) => {
                let reply = tokio::time::timeout(Duration::from_secs(86_400), running.reply)
                    .await
                    .expect("a handler answers within a (virtual) day");
                if let Some(mut events) = running.events {
                    while let Ok(e) = events.try_recv() {
                        check_message(&parse(&e), None);
                    }
                }
                Some(reply.body)
            }
            Outcome::Listen(mut listen) => {
                assert_eq!(method.as_deref(), Some("subscriptions/listen"));
                let first = listen
                    .messages
                    .next()
                    .await
                    .expect("a listen acknowledgement");
                check_message(&parse(&first), None);
                None
            }
        }
    });
    let answer = parse(&answer?);
    check_message(&answer, method.as_deref());
    let id = request
        .as_ref()
        .and_then(|r| r.get("id"))
        .filter(|id| id.is_string() || id.is_i64());
    if let Some(id) = id {
        assert_eq!(
            answer.get("id"),
            Some(id),
            "the answer echoes the request id"
        );
    }
    Some(answer)
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("the server sent invalid JSON ({e}): {bytes:?}"))
}

struct Schema {
    root: Value,
    notifications: HashMap<String, String>,
    compiled: Mutex<HashMap<String, &'static jsonschema::Validator>>,
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
    candidates
        .iter()
        .find(|c| c.exists())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "the MCP 2026-07-28 schema.json was not found (set MCP_SCHEMA_JSON; \
                 scripts/provision.sh fetches it into target/mcp-schema/)"
            )
        })
}

fn schema() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| {
        let path = schema_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let root: Value = serde_json::from_str(&text).expect("schema.json is JSON");
        let mut notifications = HashMap::new();
        for (name, def) in root["$defs"].as_object().expect("$defs") {
            if let Some(m) = def
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            {
                if name.ends_with("Notification") {
                    notifications.insert(m.to_owned(), name.clone());
                }
            }
        }
        Schema {
            root,
            notifications,
            compiled: Mutex::new(HashMap::new()),
        }
    })
}

fn assert_valid(def: &str, value: &Value) {
    let s = schema();
    let validator = *s
        .compiled
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(def.to_owned())
        .or_insert_with(|| {
            let mut root = s.root.clone();
            root["$ref"] = Value::from(format!("#/$defs/{def}"));
            Box::leak(Box::new(
                jsonschema::options()
                    .should_validate_formats(false)
                    .build(&root)
                    .unwrap_or_else(|e| panic!("compiling $defs/{def}: {e}")),
            ))
        });
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "not a valid {def}: {errors:?}\n{value}");
}

fn result_def(method: &str) -> Option<&'static str> {
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

/// One server-to-client message is valid against its schema definition.
fn check_message(message: &Value, method: Option<&str>) {
    if let Some(m) = message.get("method").and_then(Value::as_str) {
        assert!(
            message.get("id").is_none(),
            "a request from the server: {message}"
        );
        let def = schema()
            .notifications
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

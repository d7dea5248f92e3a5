//! Golden tests of the protocol data layer: every server-side shape, built with the crate's
//! public constructors, serializes to a fixed JSON text, is valid against its `$defs` entry of
//! the official schema, and reads back into an equal value.
//!
//! Submodules group the shapes; the helpers here are shared by all of them.

mod content;
mod definitions;
mod digest;
mod errors;
mod meta;
mod mrtr_and_subscriptions;
mod notifications;
mod results;

use std::fmt::Debug;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Value, json};
use stateless_mcp::protocol::{
    Annotations, ErrorObject, Icon, Implementation, JsonObject, ListChangedCapability, RequestId,
    RequestMeta, Resource, ResourcesCapability, ResultMeta, Role, SERVER_INFO_KEY,
    ServerCapabilities,
};

use crate::support::schema::assert_valid;

/// Serializes `value`, checks the JSON equals `expected` and is a valid `$defs/<def>`, then
/// deserializes it and checks the value survived the round trip.
#[track_caller]
fn golden<T>(def: &str, value: &T, expected: &Value)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let encoded = serde_json::to_value(value).expect("serializes");
    assert_eq!(&encoded, expected, "{def}: differs from the golden JSON");
    assert_valid(def, &encoded);
    let text = serde_json::to_string(value).expect("serializes");
    let decoded: T = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{def} does not deserialize: {e}\n{text}"));
    assert_eq!(&decoded, value, "{def}: the round trip changed the value");
    assert_eq!(
        &serde_json::to_value(&decoded).unwrap(),
        expected,
        "{def}: re-encoding differs"
    );
}

/// [`golden`] for a result, which is also checked inside its response (`<def>Response`).
#[track_caller]
fn golden_result<T>(def: &str, value: &T, expected: &Value)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    golden(def, value, expected);
    // The envelope the server writes around a result (its encoder is unit-tested in
    // protocol::jsonrpc): the result inside it is the value's own encoding.
    let id = RequestId::from("r-1");
    let response = json!({"jsonrpc": "2.0", "id": id, "result": value});
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": "r-1", "result": expected})
    );
    assert_valid("JSONRPCResultResponse", &response);
    assert_valid(&format!("{def}Response"), &response);
}

fn server_info() -> Arc<Implementation> {
    Arc::new(Implementation::new("golden-server", "1.2.3"))
}

fn server_info_json() -> Value {
    json!({ SERVER_INFO_KEY: {"name": "golden-server", "version": "1.2.3"} })
}

fn stamped() -> ResultMeta {
    ResultMeta {
        server_info: Some(server_info()),
        extra: Default::default(),
    }
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

fn annotations() -> Annotations {
    let mut a = Annotations::default();
    a.audience = Some(vec![Role::User, Role::Assistant]);
    a.priority = Some(0.5);
    a.last_modified = Some("2025-01-12T15:00:58Z".into());
    a
}

fn annotations_json() -> Value {
    json!({"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"})
}

fn icon() -> Icon {
    let mut i = Icon::new("https://example.com/icon.png");
    i.mime_type = Some("image/png".into());
    i.sizes = Some(vec!["48x48".into(), "96x96".into()]);
    i.theme = Some(stateless_mcp::protocol::IconTheme::Dark);
    i
}

fn icon_json() -> Value {
    json!({"src": "https://example.com/icon.png", "mimeType": "image/png",
           "sizes": ["48x48", "96x96"], "theme": "dark"})
}

fn full_resource() -> Resource {
    let mut r = Resource::new("file:///project/README.md", "readme");
    r.title = Some("Project README".into());
    r.description = Some("The project's readme".into());
    r.mime_type = Some("text/markdown".into());
    r.size = Some(1024);
    r.icons = Some(vec![icon()]);
    r.annotations = Some(annotations());
    r.meta = Some(object(json!({"com.example/owner": "docs"})));
    r
}

fn full_resource_json() -> Value {
    json!({"uri": "file:///project/README.md", "name": "readme", "title": "Project README",
           "description": "The project's readme", "mimeType": "text/markdown", "size": 1024,
           "icons": [icon_json()], "annotations": annotations_json(),
           "_meta": {"com.example/owner": "docs"}})
}

/// The capabilities of the DIGEST §6 example, built field by field.
fn example_capabilities() -> ServerCapabilities {
    let list_changed = || {
        let mut c = ListChangedCapability::default();
        c.list_changed = Some(true);
        c
    };
    let mut resources = ResourcesCapability::default();
    resources.subscribe = Some(true);
    resources.list_changed = Some(true);
    let mut caps = ServerCapabilities::default();
    caps.tools = Some(list_changed());
    caps.resources = Some(resources);
    caps.prompts = Some(list_changed());
    caps.completions = Some(Default::default());
    caps.logging = Some(Default::default());
    caps.extensions = Some(object(json!({"io.modelcontextprotocol/tasks": {}})));
    caps.experimental = Some(Default::default());
    caps
}

/// The `result` of the `server/discover` response in DIGEST §6.
fn digest_discover_result() -> Value {
    json!({"resultType": "complete",
           "supportedVersions": ["2026-07-28"],
           "capabilities": {"tools": {"listChanged": true},
                            "resources": {"subscribe": true, "listChanged": true},
                            "prompts": {"listChanged": true}, "completions": {}, "logging": {},
                            "extensions": {"io.modelcontextprotocol/tasks": {}}, "experimental": {}},
           "instructions": "optional natural-language guidance",
           "ttlMs": 3600000, "cacheScope": "public",
           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "ExampleServer", "version": "1.0.0"}}})
}

fn parse_meta(params: &Value) -> Result<RequestMeta, ErrorObject> {
    let raw: Box<RawValue> = to_raw_value(params).unwrap();
    RequestMeta::from_params(Some(&raw))
}

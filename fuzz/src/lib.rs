//! Structured inputs for the fuzz targets: requests that are mostly well-formed MCP (known
//! methods, tools, prompts and resources of the fixtures, valid or broken `_meta`, mirrored
//! headers that agree or not), so the fuzzer spends its time past the first rungs of the
//! validation ladder, plus arbitrary JSON wherever a value goes.

use arbitrary::Arbitrary;
use serde_json::{Map, Value, json};

/// Any JSON value.
#[derive(Arbitrary, Debug, Clone)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => json!(i),
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Str(s) => Value::String(s.clone()),
            Json::Array(a) => Value::Array(a.iter().map(Json::value).collect()),
            Json::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), v.value())).collect())
            }
        }
    }
}

/// A header: one of the mirrored ones (or another) with an arbitrary or base64 value.
#[derive(Arbitrary, Debug)]
pub struct HeaderInput {
    name: HeaderName,
    value: HeaderValue,
}

#[derive(Arbitrary, Debug)]
enum HeaderName {
    ProtocolVersion,
    Method,
    Name,
    Param(String),
    Other(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum HeaderValue {
    Raw(Vec<u8>),
    Text(String),
    /// `=?base64?…?=` of the text (valid or with a broken suffix).
    Base64(String, bool),
}

fn base64(text: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl HeaderInput {
    /// The header as name and value bytes.
    pub fn into_pair(self) -> (Vec<u8>, Vec<u8>) {
        let name = match self.name {
            HeaderName::ProtocolVersion => b"mcp-protocol-version".to_vec(),
            HeaderName::Method => b"mcp-method".to_vec(),
            HeaderName::Name => b"mcp-name".to_vec(),
            HeaderName::Param(p) => format!("mcp-param-{p}").into_bytes(),
            HeaderName::Other(o) => o,
        };
        let value = match self.value {
            HeaderValue::Raw(r) => r,
            HeaderValue::Text(t) => t.into_bytes(),
            HeaderValue::Base64(t, ok) => {
                let end = if ok { "?=" } else { "?" };
                format!("=?base64?{}{end}", base64(&t)).into_bytes()
            }
        };
        (name, value)
    }
}

const TOOLS: &[&str] = &[
    "echo",
    "add",
    "count",
    "sleep",
    "json_schema_2020_12_tool",
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_progress",
    "test_error_handling",
    "test_logging_tool",
    "test_custom_headers",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_trigger_resource_update",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_multi_round",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_request_state",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
];

const PROMPTS: &[&str] = &[
    "greet",
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
];

const URIS: &[&str] = &[
    "demo://readme",
    "demo://greeting/world",
    "test://static-text",
    "test://static-binary",
    "test://watched-resource",
    "test://template/42/data",
    "test://template//data",
];

#[derive(Arbitrary, Debug)]
enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    ResourcesList,
    TemplatesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
    Complete,
    Listen,
    Initialize,
    Ping,
    Other(String),
}

impl Method {
    fn name(&self) -> &str {
        match self {
            Method::Discover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::TemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::Complete => "completion/complete",
            Method::Listen => "subscriptions/listen",
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::Other(m) => m,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Id {
    Int(i64),
    Str(String),
    Null,
    Absent,
    Other(Json),
}

#[derive(Arbitrary, Debug)]
enum Version {
    Current,
    Legacy,
    Other(String),
    Missing,
}

/// How a mirrored header relates to the body.
#[derive(Arbitrary, Debug)]
enum Mirror {
    Same,
    /// The base64 form of the same value.
    Encoded,
    Absent,
    Other(String),
}

/// Which name (tool/prompt), URI or arguments the params carry.
#[derive(Arbitrary, Debug)]
enum Pick {
    Known(u8),
    Other(String),
    NotAString(Json),
    Absent,
}

#[derive(Arbitrary, Debug)]
enum Arguments {
    Echo(String),
    Add(Json, Json),
    Sleep(u32),
    Any(Json),
    Absent,
}

/// One request.
#[derive(Arbitrary, Debug)]
pub struct Request {
    method: Method,
    id: Id,
    version: Version,
    version_header: Mirror,
    method_header: Mirror,
    pick: Pick,
    name_header: Mirror,
    arguments: Arguments,
    cursor: Option<String>,
    capabilities: Option<Json>,
    progress: bool,
    log_level: Option<String>,
    request_state: Option<String>,
    input_responses: Option<Json>,
    notifications: Option<Json>,
    extra: Option<(String, Json)>,
    params_not_object: Option<Json>,
    /// Bytes appended to the JSON text.
    tail: Vec<u8>,
    headers: Vec<(String, String)>,
}

fn pick_from(list: &[&str], i: u8) -> String {
    list[usize::from(i) % list.len()].to_owned()
}

impl Request {
    /// The body and headers, with `state` as `requestState` and `responses` as
    /// `inputResponses` when given.
    fn build(
        &self,
        state: Option<&str>,
        responses: Option<&Json>,
    ) -> (Vec<u8>, Vec<(String, String)>) {
        let method = self.method.name();
        let mut meta = Map::new();
        let version = match &self.version {
            Version::Current => Some("2026-07-28".to_owned()),
            Version::Legacy => Some("2025-11-25".to_owned()),
            Version::Other(v) => Some(v.clone()),
            Version::Missing => None,
        };
        if let Some(v) = &version {
            meta.insert("io.modelcontextprotocol/protocolVersion".into(), json!(v));
        }
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            self.capabilities.as_ref().map_or_else(
                || json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
                Json::value,
            ),
        );
        if self.progress {
            meta.insert("progressToken".into(), json!("p"));
        }
        if let Some(l) = &self.log_level {
            meta.insert("io.modelcontextprotocol/logLevel".into(), json!(l));
        }
        let mut params = Map::new();
        params.insert("_meta".into(), Value::Object(meta));
        let (name_key, list): (&str, &[&str]) = match self.method {
            Method::ResourcesRead => ("uri", URIS),
            Method::PromptsGet => ("name", PROMPTS),
            _ => ("name", TOOLS),
        };
        let name = match &self.pick {
            Pick::Known(i) => Some(json!(pick_from(list, *i))),
            Pick::Other(s) => Some(json!(s)),
            Pick::NotAString(j) => Some(j.value()),
            Pick::Absent => None,
        };
        if let Some(n) = &name {
            params.insert(name_key.into(), n.clone());
        }
        let arguments = match &self.arguments {
            Arguments::Echo(t) => Some(json!({"text": t})),
            Arguments::Add(a, b) => Some(json!({"a": a.value(), "b": b.value()})),
            Arguments::Sleep(ms) => Some(json!({"ms": ms})),
            Arguments::Any(j) => Some(j.value()),
            Arguments::Absent => None,
        };
        if let Some(a) = arguments {
            params.insert("arguments".into(), a);
        }
        if let Some(c) = &self.cursor {
            params.insert("cursor".into(), json!(c));
        }
        if let Some(s) = state
            .map(str::to_owned)
            .or_else(|| self.request_state.clone())
        {
            params.insert("requestState".into(), json!(s));
        }
        if let Some(r) = responses.or(self.input_responses.as_ref()) {
            params.insert("inputResponses".into(), r.value());
        }
        if let Some(n) = &self.notifications {
            params.insert("notifications".into(), n.value());
        }
        if let Some((k, v)) = &self.extra {
            params.insert(k.clone(), v.value());
        }
        let mut body = Map::new();
        body.insert("jsonrpc".into(), json!("2.0"));
        match &self.id {
            Id::Int(i) => {
                body.insert("id".into(), json!(i));
            }
            Id::Str(s) => {
                body.insert("id".into(), json!(s));
            }
            Id::Null => {
                body.insert("id".into(), Value::Null);
            }
            Id::Absent => {}
            Id::Other(j) => {
                body.insert("id".into(), j.value());
            }
        }
        body.insert("method".into(), json!(method));
        body.insert(
            "params".into(),
            self.params_not_object
                .as_ref()
                .map_or(Value::Object(params), Json::value),
        );
        let mut bytes = serde_json::to_vec(&Value::Object(body)).expect("JSON encodes");
        bytes.extend_from_slice(&self.tail);

        let mut headers = Vec::new();
        let mut mirror = |header: &str, m: &Mirror, value: Option<String>| {
            let v = match (m, value) {
                (Mirror::Same, Some(v)) => v,
                (Mirror::Encoded, Some(v)) => format!("=?base64?{}?=", base64(&v)),
                (Mirror::Other(o), _) => o.clone(),
                _ => return,
            };
            headers.push((header.to_owned(), v));
        };
        mirror("mcp-protocol-version", &self.version_header, version);
        mirror("mcp-method", &self.method_header, Some(method.to_owned()));
        let name_text = name.and_then(|n| n.as_str().map(str::to_owned));
        mirror("mcp-name", &self.name_header, name_text);
        headers.extend(self.headers.iter().cloned());
        (bytes, headers)
    }
}

/// The second round of an exchange.
#[derive(Arbitrary, Debug)]
enum Retry {
    /// The first request again, with the `requestState` it was given and these answers.
    Same(Option<Json>),
    /// Another request, carrying that `requestState`.
    Other(Request),
}

/// One request, and maybe a second round that carries the `requestState` it was given.
#[derive(Arbitrary, Debug)]
pub struct Exchange {
    first: Request,
    retry: Option<Retry>,
}

impl Exchange {
    /// Runs the exchange; the library checks every answer.
    pub fn run(self) {
        let (body, headers) = self.first.build(None, None);
        let answer = stateless_mcp::fuzzing::handle(&body, &headers);
        let Some(retry) = self.retry else {
            return;
        };
        let state = answer
            .as_ref()
            .and_then(|a| a.pointer("/result/requestState"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (body, headers) = match &retry {
            Retry::Same(responses) => self.first.build(state.as_deref(), responses.as_ref()),
            Retry::Other(other) => other.build(state.as_deref(), None),
        };
        stateless_mcp::fuzzing::handle(&body, &headers);
    }
}

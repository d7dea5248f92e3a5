//! The ceiling for the load benchmark (`benches/load/`): a bare axum JSON-RPC server with
//! no MCP framework at all.
//!
//! One route, `POST /mcp`. It parses the body with serde_json (borrowing `id`, `method` and
//! `params`), and answers with fixed, pre-serialized results with the id spliced in:
//!
//! - `tools/call` of `echo`: the text of `params.arguments.text` as one text block;
//! - `tools/list`: a fixed list of 100 tools, shaped like the load server's
//!   (`examples/load_server.rs`: the demo tools and `tool_001` to `tool_095`);
//! - `server/discover`: a fixed result shaped like the reference server's.
//!
//! Every result carries `resultType` and `_meta` server info as the reference server's do,
//! so both send about the same bytes.
//!
//! It checks no headers, validates no `_meta`, keeps no metrics and logs nothing: it is what
//! the same HTTP stack costs without the framework. Same runtime as the reference server
//! (`#[tokio::main]`: one worker per CPU it may run on), TCP_NODELAY on every connection.
//!
//! Run with `cargo run --release --example bare_axum_baseline -- --listen 127.0.0.1:8081`;
//! it prints `listening on ADDR` to stderr. Needs no feature (it does not use this crate).

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt as _;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The tools in `tools/list`: the demo's five and 95 generated ones.
const GENERATED_TOOLS: usize = 95;

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: EchoArgs<'a>,
}

#[derive(Deserialize)]
struct EchoArgs<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
}

/// Pre-serialized results (the JSON after `"result":`).
struct Fixed {
    /// What follows the echoed text: `}],"_meta":{…}}`.
    echo_tail: Vec<u8>,
    tools_list: Vec<u8>,
    discover: Vec<u8>,
}

fn input_schema(title: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "properties": properties,
        "required": required,
    })
}

/// What every result carries, as the reference server's do.
fn complete(mut result: Value) -> Value {
    result["resultType"] = json!("complete");
    result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": {
        "name": "bare-axum-baseline", "version": env!("CARGO_PKG_VERSION")
    }});
    result
}

fn tools_list() -> Vec<u8> {
    let read_only = json!({
        "readOnlyHint": true, "destructiveHint": false,
        "idempotentHint": true, "openWorldHint": false
    });
    let mut tools = vec![
        json!({
            "name": "echo", "title": "Echo",
            "description": "Returns the given text unchanged, as one text block.",
            "inputSchema": input_schema("EchoArgs",
                json!({"text": {"type": "string", "description": "The text to send back."}}),
                &["text"]),
            "annotations": read_only,
        }),
        json!({
            "name": "add", "title": "Add",
            "description": "Adds two numbers and returns {\"sum\": a + b}.",
            "inputSchema": input_schema("AddArgs",
                json!({"a": {"type": "number", "format": "double", "description": "First addend."},
                       "b": {"type": "number", "format": "double", "description": "Second addend."}}),
                &["a", "b"]),
            "outputSchema": input_schema("Sum",
                json!({"sum": {"type": "number", "format": "double", "description": "a + b."}}),
                &["sum"]),
            "annotations": read_only,
        }),
        json!({
            "name": "count", "title": "Count",
            "description": "Counts from 1 to `steps`, reporting progress after each step (send a \
                            progressToken to see it), then returns the final count.",
            "inputSchema": input_schema("CountArgs",
                json!({"steps": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 20,
                                 "description": "How many steps to count (1 to 20)."}}),
                &["steps"]),
        }),
        json!({
            "name": "sleep", "title": "Sleep",
            "description": "Waits `ms` milliseconds, then returns \"slept {ms} ms\" (a slow \
                            request, for trying timeouts and graceful shutdown).",
            "inputSchema": input_schema("SleepArgs",
                json!({"ms": {"type": "integer", "format": "uint64", "minimum": 0, "maximum": 600000,
                              "description": "How long to sleep, in milliseconds (at most 600000)."}}),
                &["ms"]),
        }),
        json!({
            "name": "increment", "title": "Increment",
            "description": "Adds one to a counter and returns its new value. Send an \
                            Idempotency-Key header (or _meta[\"dev.stateless-mcp/idempotency-key\"]) \
                            to make a retry return the same value without counting again.",
            "inputSchema": {"additionalProperties": false, "type": "object"},
            "annotations": {
                "readOnlyHint": false, "destructiveHint": false,
                "idempotentHint": false, "openWorldHint": false
            },
        }),
    ];
    for i in 1..=GENERATED_TOOLS {
        tools.push(json!({
            "name": format!("tool_{i:03}"),
            "title": format!("Tool {i}"),
            "description": format!("Generated tool number {i} of the load benchmark; returns its query."),
            "inputSchema": input_schema("QueryArgs",
                json!({"query": {"type": "string", "description": "What to look up."},
                       "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0,
                                 "description": "At most this many results."}}),
                &["query"]),
        }));
    }
    serde_json::to_vec(&complete(
        json!({"tools": tools, "ttlMs": 60000, "cacheScope": "public"}),
    ))
    .expect("a JSON value serializes")
}

fn discover() -> Vec<u8> {
    serde_json::to_vec(&complete(json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {}
        },
        "instructions": "A demo server: echo text, add numbers, count with progress, read a readme.",
        "ttlMs": 60000,
        "cacheScope": "public"
    })))
    .expect("a JSON value serializes")
}

fn echo_tail() -> Vec<u8> {
    let meta = &complete(json!({}))["_meta"];
    let mut tail = b"}],\"_meta\":".to_vec();
    serde_json::to_writer(&mut tail, meta).expect("a JSON value serializes");
    tail.push(b'}');
    tail
}

/// `{"jsonrpc":"2.0","id":ID,"result":RESULT}`.
fn reply(id: Option<&RawValue>, result: &[u8]) -> Response {
    let id = id.map_or("null", RawValue::get);
    let mut body = Vec::with_capacity(40 + id.len() + result.len());
    body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    body.extend_from_slice(id.as_bytes());
    body.extend_from_slice(b",\"result\":");
    body.extend_from_slice(result);
    body.push(b'}');
    json_response(StatusCode::OK, body)
}

fn error(id: Option<&RawValue>, code: i32, message: &str) -> Response {
    let id = id.map_or("null", RawValue::get);
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{code},\"message\":{}}}}}",
        Value::from(message)
    );
    json_response(StatusCode::OK, body.into_bytes())
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

async fn mcp(State(fixed): State<Arc<Fixed>>, body: Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Request<'_>>(&body) else {
        return error(None, -32700, "Parse error");
    };
    match &*req.method {
        "tools/call" => {
            let params = req.params.map_or("null", RawValue::get);
            match serde_json::from_str::<CallParams<'_>>(params) {
                Ok(p) if p.name == "echo" => {
                    let mut result =
                        Vec::with_capacity(p.arguments.text.len() + 64 + fixed.echo_tail.len());
                    result.extend_from_slice(
                        b"{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":",
                    );
                    serde_json::to_writer(&mut result, &*p.arguments.text)
                        .expect("a string serializes");
                    result.extend_from_slice(&fixed.echo_tail);
                    reply(req.id, &result)
                }
                Ok(_) => error(req.id, -32602, "Unknown tool"),
                Err(_) => error(req.id, -32602, "Invalid params"),
            }
        }
        "tools/list" => reply(req.id, &fixed.tools_list),
        "server/discover" => reply(req.id, &fixed.discover),
        _ => error(req.id, -32601, "Method not found"),
    }
}

fn listen_arg() -> Result<SocketAddr, String> {
    let mut args = std::env::args().skip(1);
    let mut listen = SocketAddr::from(([127, 0, 0, 1], 0));
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "--listen" => args.next().ok_or("--listen needs an address")?,
            a if a.starts_with("--listen=") => a["--listen=".len()..].to_owned(),
            other => return Err(format!("unknown argument {other:?} (usage: --listen ADDR)")),
        };
        listen = value
            .parse()
            .map_err(|e| format!("bad --listen {value:?}: {e}"))?;
    }
    Ok(listen)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let listen = match listen_arg() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bare_axum_baseline: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let fixed = Arc::new(Fixed {
        echo_tail: echo_tail(),
        tools_list: tools_list(),
        discover: discover(),
    });
    let app = Router::new().route("/mcp", post(mcp)).with_state(fixed);
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bare_axum_baseline: cannot listen on {listen}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(a) => eprintln!("listening on {a}"),
        Err(e) => {
            eprintln!("bare_axum_baseline: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    match axum::serve(listener, app).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bare_axum_baseline: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

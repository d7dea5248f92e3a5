//! Decode → dispatch → encode through [`Server::handle`], without HTTP.
//!
//! Each benchmark hands the server a complete request body and the mirrored header values a
//! Streamable HTTP transport would extract, drives the outcome to its reply, and keeps the
//! encoded bytes:
//!
//! - `dispatch/tools_call_echo`: `tools/call` of a typed `echo` tool with a full `_meta`;
//! - `dispatch/tools_list_100`: `tools/list` of 100 registered tools (one page);
//! - `dispatch/discover`: `server/discover`;
//! - `dispatch/tools_call_100kb`: `tools/call` of `echo` with a 100 KB string argument;
//! - `dispatch/mrtr_ask_seal`: a tool answers `input_required` with state, which is sealed;
//! - `dispatch/mrtr_retry_open`: the retry, whose `requestState` is opened and verified.
//!
//! Run with `cargo bench --bench dispatch`. Compare builds by instruction counts (see
//! DESIGN §6); wall-clock numbers here are for orientation.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http::Extensions;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::extend::{Mirrored, MirroredHeaders, Outcome};
use stateless_mcp::settings::StateKeys;
use stateless_mcp::{HandlerError, InputRequired, RequestContext, Server, ToolDef};
use tokio::runtime::Runtime;

const VERSION: &str = "2026-07-28";

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

fn echo_tool(name: &str) -> ToolDef {
    ToolDef::new(name)
        .title("Echo")
        .description("Returns the given text unchanged, as one text block.")
        .handler(
            |_ctx: RequestContext, args: EchoArgs| async move { Ok::<_, HandlerError>(args.text) },
        )
}

/// A server with `echo` and `count - 1` more tools of the same shape.
fn server(count: usize) -> Server {
    let mut b = Server::builder().tool(echo_tool("echo"));
    for i in 1..count {
        b = b.tool(echo_tool(&format!("tool_{i:03}")));
    }
    b.build().expect("the benchmark server builds")
}

/// A request body with the `_meta` a full-featured client sends.
fn body(id: u64, method: &str, mut params: Value) -> Bytes {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "bench-client", "version": "1.0.0"},
        "io.modelcontextprotocol/logLevel": "info",
        "progressToken": format!("progress-{id}"),
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    });
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .expect("the request encodes")
        .into()
}

/// The header values an HTTP transport would have mirrored for this request.
fn mirror<'a>(method: &'a str, name: Option<&'a str>) -> MirroredHeaders<'a> {
    MirroredHeaders {
        protocol_version: Mirrored::Value(VERSION.into()),
        method: Mirrored::Value(method.into()),
        name: name.map_or(Mirrored::Absent, |n| Mirrored::Value(n.into())),
        params: vec![],
    }
}

/// One full pass: decode and dispatch, run the handler if any, return the encoded reply.
fn exchange(rt: &Runtime, server: &Server, body: &Bytes, mirror: &MirroredHeaders) -> Bytes {
    match server.handle(body, Some(mirror), Extensions::new()) {
        Outcome::Ready(reply) => reply.into_bytes(),
        Outcome::Running(running) => rt.block_on(running.reply).into_bytes(),
        Outcome::Accepted => panic!("a request was taken for a notification"),
        other => panic!("unexpected outcome {other:?}"),
    }
}

/// Checks once, before measuring, that the benchmark exercises the success path.
fn expect_result(rt: &Runtime, server: &Server, body: &Bytes, mirror: &MirroredHeaders) -> Value {
    let reply = exchange(rt, server, body, mirror);
    let mut v: Value = serde_json::from_slice(&reply).expect("the reply is JSON");
    assert!(v.get("error").is_none(), "benchmark request failed: {v}");
    v["result"].take()
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    let one = server(1);
    let hundred = server(100);
    let mut group = c.benchmark_group("dispatch");

    let call_mirror = mirror("tools/call", Some("echo"));
    let echo = body(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hello, world"}}),
    );
    let result = expect_result(&rt, &one, &echo, &call_mirror);
    assert_eq!(result["content"][0]["text"], "hello, world");
    group.bench_function("tools_call_echo", |b| {
        b.iter(|| exchange(&rt, &one, black_box(&echo), &call_mirror))
    });

    let list_mirror = mirror("tools/list", None);
    let list = body(2, "tools/list", json!({}));
    let result = expect_result(&rt, &hundred, &list, &list_mirror);
    assert_eq!(result["tools"].as_array().map(Vec::len), Some(100));
    assert!(result.get("nextCursor").is_none(), "one page of 100");
    group.bench_function("tools_list_100", |b| {
        b.iter(|| exchange(&rt, &hundred, black_box(&list), &list_mirror))
    });

    let discover_mirror = mirror("server/discover", None);
    let discover = body(3, "server/discover", json!({}));
    let result = expect_result(&rt, &one, &discover, &discover_mirror);
    assert_eq!(result["supportedVersions"], json!([VERSION]));
    group.bench_function("discover", |b| {
        b.iter(|| exchange(&rt, &one, black_box(&discover), &discover_mirror))
    });

    let text: String = "The quick brown fox jumps over the lazy dog. "
        .chars()
        .cycle()
        .take(100 * 1024)
        .collect();
    let large = body(
        4,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": text}}),
    );
    let result = expect_result(&rt, &one, &large, &call_mirror);
    assert_eq!(
        result["content"][0]["text"].as_str().map(str::len),
        Some(100 * 1024)
    );
    group.throughput(Throughput::Bytes(large.len() as u64));
    group.bench_function("tools_call_100kb", |b| {
        b.iter(|| exchange(&rt, &one, black_box(&large), &call_mirror))
    });

    group.throughput(Throughput::Elements(1));
    let ask_server = Server::builder()
        .tool(
            ToolDef::new("confirm").handler(|ctx: RequestContext, args: EchoArgs| async move {
                if ctx.input().state::<String>().is_some() {
                    return Ok(args.text);
                }
                Err(HandlerError::from(
                    InputRequired::new()
                        .elicit_form("ok", "Sure?", json!({"type": "object"}))
                        .state(&args.text),
                ))
            }),
        )
        .state_keys(
            "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
                .parse::<StateKeys>()
                .expect("a valid key"),
        )
        .build()
        .expect("the benchmark server builds");
    let ask_mirror = mirror("tools/call", Some("confirm"));
    let args = json!({"name": "confirm", "arguments": {"text": "delete everything"}});
    let ask = body(5, "tools/call", args.clone());
    let result = expect_result(&rt, &ask_server, &ask, &ask_mirror);
    let state = result["requestState"]
        .as_str()
        .expect("a sealed state")
        .to_owned();
    group.bench_function("mrtr_ask_seal", |b| {
        b.iter(|| exchange(&rt, &ask_server, black_box(&ask), &ask_mirror))
    });
    let mut retry_params = args;
    retry_params["requestState"] = json!(state);
    retry_params["inputResponses"] = json!({"ok": {"action": "accept", "content": {}}});
    let retry = body(6, "tools/call", retry_params);
    let result = expect_result(&rt, &ask_server, &retry, &ask_mirror);
    assert_eq!(result["content"][0]["text"], "delete everything");
    group.bench_function("mrtr_retry_open", |b| {
        b.iter(|| exchange(&rt, &ask_server, black_box(&retry), &ask_mirror))
    });

    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);

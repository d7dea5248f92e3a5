//! What a request costs with its observation on: the request span, its metric series picked
//! from the labels, the in-flight gauge, and on finish the counter and duration histogram,
//! with the Prometheus recorder installed, as the reference server runs. Measured through
//! [`Server::handle`] (the observer is crate-private), so each figure includes the ladder;
//! compare the cases with each other and with `benches/dispatch.rs`.
//!
//! - `observe/tools_call`: a `tools/call` of a registered tool (named series);
//! - `observe/unknown_tool`: a `tools/call` of a name outside the registry (`_other`);
//! - `observe/discover`: `server/discover` (no name label).
//!
//! Run with `cargo bench --bench observe`.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http::Extensions;
use serde_json::{Value, json};
use stateless_mcp::extend::Outcome;
use stateless_mcp::observability::PrometheusMetrics;
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};

fn body(method: &str, params: Value) -> Bytes {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    Bytes::from(serde_json::to_vec(&message).expect("serializes"))
}

fn observe(c: &mut Criterion) {
    let _recorder = PrometheusMetrics::install().expect("the recorder installs");
    let mut builder = Server::builder();
    for i in 0..100 {
        builder = builder.tool(ToolDef::new(format!("tool_{i:03}")).raw_handler(
            |_ctx: RequestContext, _args: Value| async move { Ok::<_, HandlerError>("ok") },
        ));
    }
    let server = builder.build().expect("the server builds");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("observe");
    for (id, request) in [
        (
            "tools_call",
            body("tools/call", json!({"name": "tool_042", "arguments": {}})),
        ),
        (
            "unknown_tool",
            body("tools/call", json!({"name": "nope", "arguments": {}})),
        ),
        ("discover", body("server/discover", json!({}))),
    ] {
        group.bench_function(id, |b| {
            b.iter(|| {
                let outcome = server.handle(black_box(&request), None, Extensions::new());
                let reply = match outcome {
                    Outcome::Ready(reply) => reply,
                    Outcome::Running(running) => runtime.block_on(running.reply),
                    other => panic!("unexpected {other:?}"),
                };
                black_box(reply);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, observe);
criterion_main!(benches);

//! The official TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned in
//! tests/tools/package.json and run on the pinned Node 22) against the reference binary with
//! the conformance fixtures: a `subscriptions/listen` stream that receives a tools
//! list-changed event, and multi-round-trip tool calls fulfilled by the SDK's own handlers;
//! and its `StdioClientTransport` spawning the binary with `--transport stdio`.

use std::process::Command;

use std::path::PathBuf;

use crate::support::process::{node, root, run_interop_client, spawn_server, tool};

/// The installed `@modelcontextprotocol/client` package.
fn ts_client() -> PathBuf {
    tool(
        "MCP_TEST_TS_CLIENT",
        "target/test-tools/node/node_modules/@modelcontextprotocol/client",
        "the TypeScript SDK client @modelcontextprotocol/client",
    )
}

#[test]
fn typescript_sdk_client_listens_and_completes_input_required_rounds() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    run_interop_client(
        Command::new(node())
            .arg(root().join("tests/interop/typescript/listen.mjs"))
            .arg(&server.url)
            .arg(ts_client()),
        "TypeScript SDK interop",
    );
}

#[test]
fn typescript_sdk_stdio_client_transport_spawns_the_reference_server() {
    run_interop_client(
        Command::new(node())
            .arg(root().join("tests/interop/typescript/stdio.mjs"))
            .arg(ts_client())
            .arg(env!("CARGO_BIN_EXE_stateless-mcp"))
            .args(["--transport", "stdio", "--fixtures", "conformance"]),
        "TypeScript SDK stdio interop",
    );
}

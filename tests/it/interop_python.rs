//! The official Python SDK (`mcp==2.3.0`, pinned in tests/interop/python/requirements.txt)
//! drives the reference binary: discover, list, call, read, get, an unsupported version;
//! and, against the conformance fixtures, multi-round-trip requests answered through the
//! SDK's own elicitation/sampling/roots callbacks and `subscriptions/listen` streams; and the
//! SDK's stdio client spawning the binary with `--transport stdio`.

use std::process::Command;

use crate::support::process::{ServerProcess, python, root, run_interop_client, spawn_server};

/// Runs `tests/interop/python/<script> URL` and asserts every step passed.
fn run_python_client(script: &str, server: &ServerProcess) {
    run_interop_client(
        Command::new(python())
            .arg(root().join("tests/interop/python").join(script))
            .arg(&server.url),
        &format!("Python SDK interop ({script})"),
    );
}

#[test]
fn python_sdk_client_talks_to_the_reference_server() {
    let server = spawn_server(&[]);
    run_python_client("client_2026.py", &server);
}

#[test]
fn python_sdk_client_completes_input_required_rounds_and_listens() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    run_python_client("mrtr_listen_2026.py", &server);
}

/// Runs `tests/interop/python/stdio_client.py MODE <binary> --transport stdio …`: the SDK
/// spawns the reference binary itself and talks to it over its stdin and stdout.
fn run_python_stdio_client(mode: &str) {
    run_interop_client(
        Command::new(python())
            .arg(root().join("tests/interop/python/stdio_client.py"))
            .arg(mode)
            .arg(env!("CARGO_BIN_EXE_stateless-mcp"))
            .args(["--transport", "stdio", "--fixtures", "conformance"]),
        &format!("Python SDK stdio interop ({mode})"),
    );
}

#[test]
fn python_sdk_stdio_client_in_2026_mode_spawns_the_reference_server() {
    run_python_stdio_client("2026-07-28");
}

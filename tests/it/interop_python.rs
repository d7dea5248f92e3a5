//! The official Python SDK (`mcp==2.3.0`, pinned in tests/interop/python/requirements.txt)
//! drives the reference binary: discover, list, call, read, get, an unsupported version;
//! and, against the conformance fixtures, multi-round-trip requests answered through the
//! SDK's own elicitation/sampling/roots callbacks and `subscriptions/listen` streams.

use std::process::Command;

use crate::support::process::{ServerProcess, root, spawn_server, tool};

/// Runs `tests/interop/python/<script> URL` and asserts every step passed.
fn run_python_client(script: &str, server: &ServerProcess) {
    let python = tool(
        "MCP_TEST_PYTHON",
        "target/test-tools/pyvenv/bin/python",
        "a Python with mcp==2.3.0",
    );
    let out = Command::new(python)
        .arg(root().join("tests/interop/python").join(script))
        .arg(&server.url)
        .output()
        .expect("the Python interop client runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(
        out.status.success(),
        "Python SDK interop ({script}) failed:\n{text}"
    );
    assert!(text.contains(" 0 failed"), "{text}");
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

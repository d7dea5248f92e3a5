//! The official Python SDK (`mcp==2.3.0`, pinned in tests/interop/python/requirements.txt)
//! drives the reference binary: discover, list, call, read, get, an unsupported version.

use std::process::Command;

use crate::support::process::{root, spawn_server, tool};

#[test]
fn python_sdk_client_talks_to_the_reference_server() {
    let python = tool(
        "MCP_TEST_PYTHON",
        "target/test-tools/pyvenv/bin/python",
        "a Python with mcp==2.3.0",
    );
    let server = spawn_server(&[]);
    let out = Command::new(python)
        .arg(root().join("tests/interop/python/client_2026.py"))
        .arg(&server.url)
        .output()
        .expect("the Python interop client runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "Python SDK interop failed:\n{text}");
    assert!(text.contains(" 0 failed"), "{text}");
}

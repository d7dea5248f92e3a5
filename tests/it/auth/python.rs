//! The official Python SDK (`mcp==2.3.0`) calls a protected server with a bearer token.

use crate::support::process::{root, tool};

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_client_calls_a_protected_server() {
    let python = tool(
        "MCP_TEST_PYTHON",
        "target/test-tools/pyvenv/bin/python",
        "a Python with mcp==2.3.0",
    );
    let p = super::protected(|b| b).await;
    let token = p.token("mcp files:read");
    let out = tokio::process::Command::new(python)
        .arg(root().join("tests/interop/python/client_auth.py"))
        .arg(&p.server.url)
        .arg(&token)
        .output()
        .await
        .expect("the Python interop client runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(
        out.status.success(),
        "Python SDK auth interop failed:\n{text}"
    );
    assert!(text.contains("4 passed, 0 failed"), "{text}");
}

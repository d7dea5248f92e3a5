//! The official Python SDK (`mcp==2.3.0`, pinned in tests/interop/python/requirements.txt)
//! drives the reference binary: discover, list, call, read, get, an unsupported version;
//! and, against the conformance fixtures, multi-round-trip requests answered through the
//! SDK's own elicitation/sampling/roots callbacks and `subscriptions/listen` streams; and the
//! SDK's stdio client spawning the binary with `--transport stdio`, in both modes (an
//! elicitation round and a tools list change each; in legacy mode the elicitation is a
//! server-to-client request on stdout and the change a plain notification). In its legacy mode
//! (`mode="legacy"`, a 2025-11-25 session), on one replica and through nginx across three:
//! initialize, list, call, elicitation/sampling/roots callbacks, setLevel and log messages,
//! subscribe, a list change on its GET stream, DELETE on close; and resumption: the SDK
//! reconnects by itself with `Last-Event-ID` to a stream the server closed mid-call, on one
//! replica and across three.

use std::path::Path;
use std::process::Command;

use crate::support::cluster::{Cluster, ClusterOptions, TempDir, resumes_across_three_replicas};
use crate::support::legacy::check_recorded_legacy_messages;
use crate::support::process::{
    ServerProcess, python, root, run_interop_client, run_resume_client, spawn_server,
};

/// Runs `tests/interop/python/<script> URL [extra]` and asserts every step passed.
fn run_python_script(script: &str, url: &str, extra: Option<&Path>) {
    let mut cmd = Command::new(python());
    cmd.arg(root().join("tests/interop/python").join(script))
        .arg(url);
    if let Some(extra) = extra {
        cmd.arg(extra);
    }
    run_interop_client(&mut cmd, &format!("Python SDK interop ({script})"));
}

/// Runs `tests/interop/python/<script> URL` and asserts every step passed.
fn run_python_client(script: &str, server: &ServerProcess) {
    run_python_script(script, &server.url, None);
}

/// Runs `client_legacy.py URL RECORD` and checks every message the SDK received against the
/// 2025-11-25 schema.
fn run_python_legacy_client(url: &str) {
    let dir = TempDir::new("py-legacy");
    let record = dir.path().join("received.jsonl");
    run_python_script("client_legacy.py", url, Some(&record));
    check_recorded_legacy_messages(
        &record,
        &[
            "elicitation/create",
            "sampling/createMessage",
            "roots/list",
            "notifications/message",
            "notifications/tools/list_changed",
        ],
    );
}

#[test]
fn python_sdk_client_runs_a_legacy_session() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    run_python_legacy_client(&server.url);
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_client_runs_a_legacy_session_across_three_replicas() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let url = cluster.nginx.url.clone();
    tokio::task::spawn_blocking(move || run_python_legacy_client(&url))
        .await
        .unwrap();
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

#[test]
fn python_sdk_stdio_client_in_legacy_mode_initializes_over_stdio() {
    run_python_stdio_client("legacy");
}

/// Runs `tests/interop/python/resume.py URL`: the SDK calls `test_reconnection`, whose POST
/// stream the server closes before the result, reconnects by itself with GET +
/// `Last-Event-ID` and gets the result. Whether another replica answered the resume.
fn run_python_resume_client(url: &str) -> bool {
    run_resume_client(
        Command::new(python())
            .arg(root().join("tests/interop/python/resume.py"))
            .arg(url),
        "Python SDK stream resumption",
    )
}

#[test]
fn python_sdk_client_resumes_a_stream_the_server_closed() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    run_python_resume_client(&server.url);
}

/// Behind nginx (round robin) with the event store in the bus's Redis: the SDK's GET with
/// `Last-Event-ID` lands on another replica at least once in three calls.
#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_client_resumes_a_closed_stream_across_three_replicas() {
    resumes_across_three_replicas(run_python_resume_client).await;
}

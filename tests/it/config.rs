//! Configuration of the real binary: bad values stop start-up with a message naming the
//! setting; file < environment < flag; `--help` and the configuration table of
//! `docs/operations.md` cover every setting.

use clap::CommandFactory as _;
use serde_json::{Value, json};
use stateless_mcp::app::Config;

use crate::support::Client;
use crate::support::process::{root, run_server, spawn_server_with};

/// A config file in the target directory, removed on drop.
struct ConfigFile(std::path::PathBuf);

impl ConfigFile {
    fn new(name: &str, text: &str) -> Self {
        let dir = root().join("target/it-config");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}-{}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        ConfigFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn fails_naming(args: &[&str], envs: &[(&str, &str)], names: &[&str]) {
    let (status, text) = run_server(args, envs);
    assert!(!status.success(), "{args:?} {envs:?} started: {text}");
    for n in names {
        assert!(text.contains(n), "{args:?} {envs:?}: {n:?} not in {text}");
    }
}

#[test]
fn bad_values_stop_start_up_naming_the_setting() {
    fails_naming(&["--page-size", "0"], &[], &["--page-size"]);
    fails_naming(&["--listen", "localhost"], &[], &["--listen"]);
    fails_naming(&["--path", "mcp"], &[], &["--path (MCP_PATH)"]);
    fails_naming(&["--log", "a=b=c"], &[], &["--log (MCP_LOG)"]);
    fails_naming(
        &[],
        &[("MCP_DRAIN_DELAY_SECS", "soon")],
        &["--drain-delay-secs", "soon"],
    );
    fails_naming(&[], &[("MCP_LOG_FORMAT", "xml")], &["--log-format", "xml"]);
    let bad_key = ConfigFile::new("bad-key", "page_sise = 3\n");
    fails_naming(
        &["--config", bad_key.path()],
        &[],
        &["unknown setting `page_sise`"],
    );
    let bad_value = ConfigFile::new("bad-value", "keepalive_secs = 0\n");
    fails_naming(
        &["--config", bad_value.path()],
        &[],
        &["setting `keepalive_secs`", bad_value.path()],
    );
    fails_naming(&["--no-such-flag"], &[], &["--no-such-flag"]);
    // A bad sealing key names the setting and never echoes the key.
    let (status, text) = run_server(&[], &[("MCP_STATE_KEYS", "k1:c2hvcnRrZXk=")]);
    assert!(!status.success(), "{text}");
    assert!(text.contains("--state-keys (MCP_STATE_KEYS)"), "{text}");
    assert!(!text.contains("c2hvcnRrZXk"), "{text}");
}

fn effective(lines: &[String]) -> &str {
    lines
        .iter()
        .find(|l| l.contains("effective configuration"))
        .unwrap_or_else(|| panic!("no effective configuration line in {lines:#?}"))
}

#[tokio::test]
async fn file_then_environment_then_flags() {
    let file = ConfigFile::new(
        "precedence",
        "page_size = 2\nlist_ttl_ms = 1111\nbody_limit = 1000\nstate_keys = [\"k1:ZmlsZS1zZWNyZXQtZmlsZS1zZWNyZXQtZmlsZS1zZWM=\"]\n",
    );
    let srv = spawn_server_with(
        &["--config", file.path(), "--body-limit", "3000"],
        &[
            ("MCP_LIST_TTL_MS", "2222"),
            ("MCP_BODY_LIMIT", "2000"),
            (
                "MCP_STATE_KEYS",
                "k2:ZW52LXNlY3JldC1lbnYtc2VjcmV0LWVudi1zZWNyZXQ=",
            ),
        ],
    );
    let lines = srv.stderr_lines();
    let line = effective(&lines);
    for part in [
        "page_size=2(file)",
        "list_ttl_ms=2222(env)",
        "body_limit=3000(flag)",
        "state_keys=<redacted>(env)",
        "path=/mcp(default)",
    ] {
        assert!(line.contains(part), "{part} not in {line}");
    }
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("ZW52LXNlY3JldA") || l.contains("ZmlsZS1zZWNyZXQ"))
    );

    let client = Client::new(&srv.url);
    let x = client.request("tools/list", json!(1), Value::Null).await;
    assert_eq!(
        x.result()["tools"].as_array().unwrap().len(),
        2,
        "page_size from the file"
    );
    assert!(x.result().get("nextCursor").is_some());
    assert_eq!(
        x.result()["ttlMs"],
        2222,
        "list_ttl_ms from the environment"
    );
    let text = "x".repeat(2500);
    let x = client
        .request(
            "tools/call",
            json!(2),
            json!({"name": "echo", "arguments": {"text": text}}),
        )
        .await;
    assert_eq!(x.status, 200, "body_limit from the flag");
}

#[test]
fn help_documents_every_setting() {
    let (status, help) = run_server(&["--help"], &[]);
    assert!(status.success());
    for arg in Config::command().get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        assert!(
            help.contains(&format!("--{long}")),
            "--{long} missing from --help"
        );
        if !matches!(long, "help" | "version") {
            let env = arg
                .get_env()
                .expect("every setting has an environment variable");
            assert!(
                help.contains(&*env.to_string_lossy()),
                "{env:?} missing from --help"
            );
            assert!(arg.get_help().is_some(), "--{long} has no help text");
        }
    }
    // It speaks to operators: what the settings are and where they come from, none of the
    // developer notes of the `Config` type.
    assert!(help.contains("MCP_* environment variable"), "{help}");
    for developer_note in ["Config::load", "Debug", "Config::effective"] {
        assert!(
            !help.contains(developer_note),
            "--help says {developer_note}"
        );
    }
    // Secrets given in the environment are not shown.
    let (_, help) = run_server(&["--help"], &[("MCP_STATE_KEYS", "k:c2VjcmV0")]);
    assert!(!help.contains("c2VjcmV0"), "{help}");
}

/// The configuration table of `docs/operations.md` has one row per setting: flag, env and
/// default as `Config::command()` declares them.
#[test]
fn operations_table_matches_the_flags() {
    let readme = std::fs::read_to_string(root().join("docs/operations.md")).unwrap();
    let mut rows = std::collections::BTreeMap::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 5 || !cells[1].starts_with("`--") {
            continue;
        }
        let strip = |c: &str| c.trim_matches('`').to_owned();
        rows.insert(strip(cells[1]), (strip(cells[2]), cells[3].to_owned()));
    }
    let mut expected = std::collections::BTreeSet::new();
    for arg in Config::command().get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if matches!(long, "help" | "version") {
            continue;
        }
        let flag = format!("--{long}");
        expected.insert(flag.clone());
        let (env, default) = rows
            .get(&flag)
            .unwrap_or_else(|| panic!("docs/operations.md lacks a row for {flag}"));
        assert_eq!(
            Some(env.as_str()),
            arg.get_env().and_then(|e| e.to_str()),
            "env of {flag}"
        );
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        if defaults.is_empty() {
            assert!(
                !default.starts_with('`'),
                "docs/operations.md gives {flag} a default ({default}) that it does not have"
            );
        } else {
            assert_eq!(
                default,
                &format!("`{}`", defaults.join(",")),
                "default of {flag}"
            );
        }
    }
    let documented: std::collections::BTreeSet<String> = rows.keys().cloned().collect();
    assert_eq!(
        documented, expected,
        "docs/operations.md rows and settings differ"
    );
}

#[cfg(feature = "redis")]
#[test]
fn a_replica_on_a_shared_bus_without_a_key_ring_is_refused_at_start() {
    // Nothing listens on port 1: the refusal comes before any connection matters.
    fails_naming(
        &["--listen", "127.0.0.1:0", "--bus", "redis://127.0.0.1:1"],
        &[],
        &[
            "shared with other replicas",
            "no requestState key ring",
            "MCP_STATE_KEYS",
        ],
    );
    // With a shared key ring it starts (and would wait for its broker).
    let srv = crate::support::process::spawn_server(&[
        "--bus",
        "redis://127.0.0.1:1",
        "--state-keys",
        crate::support::cluster::STATE_KEYS,
        "--bus-readiness",
        "report",
    ]);
    drop(srv);
}

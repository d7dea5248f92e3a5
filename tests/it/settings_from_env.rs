//! `settings::Settings::from_env` in a binary of the user's own (`examples/from_env.rs`):
//! the reference server's `MCP_*` variables configure it (path, page size, origins and CORS,
//! probes); a bad value stops it naming the variable; a replica on a shared bus without the
//! shared key ring is refused at start, naming `MCP_STATE_KEYS`.

use serde_json::json;

use crate::support::Client;
use crate::support::example::ExampleProcess;

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_servers_variables_configure_a_users_binary() {
    let app = ExampleProcess::start(
        "from_env",
        &[],
        &[
            ("MCP_LISTEN", "127.0.0.1:0"),
            ("MCP_PATH", "/v1/mcp"),
            ("MCP_PAGE_SIZE", "1"),
            ("MCP_ALLOWED_ORIGINS", "http://app.example"),
            ("MCP_STATE_KEYS", crate::support::cluster::STATE_KEYS),
        ],
    );
    let line = app.wait_for("serving MCP");
    let address = line.split(" address=").nth(1).unwrap();
    let port = address
        .split_whitespace()
        .next()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap();
    let base = format!("http://localhost:{port}");
    assert!(
        !app.lines()
            .iter()
            .any(|l| l.contains("MCP_STATE_KEYS") && l.contains("no requestState keys")),
        "the key ring was read"
    );
    let client = Client::new(&format!("{base}/v1/mcp"));
    let page = client.request("tools/list", json!(1), json!({})).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.result()["tools"].as_array().unwrap().len(), 1);
    assert!(page.result()["nextCursor"].is_string(), "{}", page.body);
    let preflight = crate::support::http()
        .request(reqwest::Method::OPTIONS, format!("{base}/v1/mcp"))
        .header("origin", "http://app.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        "http://app.example"
    );
    let ready = crate::support::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(ready.status(), 200);
}

/// Runs the example with `envs` and returns its stderr once it exited (it must fail).
fn fails(envs: &[(&str, &str)]) -> String {
    let mut app = ExampleProcess::start("from_env", &[], envs);
    let status = app.wait();
    assert!(!status.success(), "started with {envs:?}");
    app.lines().join("\n")
}

#[test]
fn a_bad_value_stops_it_naming_the_variable() {
    let text = fails(&[("MCP_LISTEN", "127.0.0.1:0"), ("MCP_PAGE_SIZE", "0")]);
    assert!(text.contains("MCP_PAGE_SIZE"), "{text}");
}

#[cfg(feature = "redis")]
#[test]
fn a_replica_on_a_shared_bus_without_the_key_ring_is_refused() {
    let text = fails(&[
        ("MCP_LISTEN", "127.0.0.1:0"),
        ("MCP_BUS", "redis://127.0.0.1:1"),
    ]);
    assert!(
        text.contains("shared with other replicas") && text.contains("MCP_STATE_KEYS"),
        "{text}"
    );
}

//! CORS in a real browser: headless Chromium (Debian's `chromium`; `scripts/provision.sh`
//! installs it) loads a page from one loopback origin (a small static server here) whose
//! script calls the reference server on another origin with `fetch`: `server/discover`,
//! `tools/call`, a legacy `initialize` whose `Mcp-Session-Id` it reads from the answer, and
//! a legacy call carrying that id. The same page from an origin the server does not allow
//! gets nothing: the browser refuses every call.
//!
//! The page posts what it saw back to its own origin (`/report`); the test checks that
//! report (every MCP message against the schema of its era) and stops the browser.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::Html;
use axum::routing::{get, post};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::support::process::spawn_server;
use crate::support::{checked_messages, legacy::legacy_messages};

/// The Chromium binary: `MCP_TEST_CHROMIUM`, else `chromium` on the `PATH`.
fn chromium() -> String {
    let bin = std::env::var("MCP_TEST_CHROMIUM").unwrap_or_else(|_| "chromium".to_owned());
    let found = Command::new(&bin)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "`{bin}` is missing: install it with `apt-get install chromium` (or run \
         scripts/provision.sh), or point MCP_TEST_CHROMIUM at a Chromium binary"
    );
    bin
}

/// Headless Chromium showing `url`, killed on drop.
struct Browser {
    child: Child,
    _profile: TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory, removed on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(url: &str) -> Browser {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let profile = std::env::temp_dir().join(format!(
        "stateless-mcp-chromium-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&profile).unwrap();
    let child = Command::new(chromium())
        .args([
            "--headless",
            // Tests run as root in CI containers, where Chromium's sandbox cannot start.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    Browser {
        child,
        _profile: TempDir(profile),
    }
}

/// The page: calls the MCP endpoint named by its `mcp` query parameter with fetch, then
/// posts the results to `/report`.
const PAGE: &str = r#"<!doctype html>
<html><body><pre id="out">running</pre><script>
const MCP = new URLSearchParams(location.search).get("mcp");
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": {"name": "browser-test", "version": "1.0.0"},
  "io.modelcontextprotocol/clientCapabilities": {}
};
async function post(headers, body) {
  try {
    const r = await fetch(MCP, {
      method: "POST",
      headers: Object.assign({
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"
      }, headers),
      body: JSON.stringify(body)
    });
    return {
      status: r.status,
      contentType: r.headers.get("content-type"),
      session: r.headers.get("mcp-session-id"),
      body: await r.text()
    };
  } catch (e) {
    return {error: String(e)};
  }
}
(async () => {
  const out = {};
  out.discover = await post(
    {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
    {jsonrpc: "2.0", id: 1, method: "server/discover", params: {_meta: META}});
  out.call = await post(
    {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"},
    {jsonrpc: "2.0", id: 2, method: "tools/call",
      params: {name: "echo", arguments: {text: "from chromium"}, _meta: META}});
  out.initialize = await post({},
    {jsonrpc: "2.0", id: 3, method: "initialize", params: {protocolVersion: "2025-11-25",
      capabilities: {}, clientInfo: {name: "browser-test", version: "1.0.0"}}});
  if (out.initialize.session) {
    out.legacyList = await post(
      {"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": out.initialize.session},
      {jsonrpc: "2.0", id: 4, method: "tools/list", params: {}});
  }
  document.getElementById("out").textContent = JSON.stringify(out);
  await fetch("/report", {method: "POST", body: JSON.stringify(out)});
})();
</script></body></html>"#;

/// Serves `page` at `/page.html` on a loopback port and sends each `/report` body to the
/// returned channel. Returns the port.
async fn page_server(page_html: String) -> (u16, mpsc::Receiver<Value>) {
    let (tx, rx) = mpsc::channel(4);
    let app = Router::new()
        .route("/page.html", get(move || async move { Html(page_html) }))
        .route(
            "/report",
            post(
                |State(tx): State<mpsc::Sender<Value>>, body: String| async move {
                    let _ = tx
                        .send(serde_json::from_str(&body).expect("a JSON report"))
                        .await;
                    "thanks"
                },
            ),
        )
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, rx)
}

/// Loads `url` in Chromium and returns the page's report (bounded wait).
async fn report(url: &str, reports: &mut mpsc::Receiver<Value>) -> Value {
    let _browser = open(url);
    tokio::time::timeout(Duration::from_secs(90), reports.recv())
        .await
        .expect("the page reported within 90 s")
        .expect("a report")
}

/// The one message of a call's answer, checked against its era's schema.
fn message(call: &Value, method: &str, legacy: bool) -> Value {
    assert_eq!(call["status"], 200, "{call}");
    let ct = call["contentType"].as_str().unwrap_or_default();
    let body = call["body"].as_str().unwrap();
    let mut messages = if legacy {
        legacy_messages(ct, body, Some(method))
    } else {
        checked_messages(ct, body, Some(method))
    };
    assert_eq!(messages.len(), 1, "{call}");
    messages.remove(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_on_an_allowed_origin_calls_the_server_and_another_origin_is_refused() {
    chromium();
    let (page_port, mut reports) = page_server(PAGE.to_owned()).await;
    let allowed = format!("http://127.0.0.1:{page_port}");
    let srv = spawn_server(&["--allowed-origins", &allowed]);
    let query = format!("mcp=http://127.0.0.1:{}/mcp", srv.port);

    // From the allowed origin: every call answered, the session id readable.
    let seen = report(&format!("{allowed}/page.html?{query}"), &mut reports).await;
    let discover = message(&seen["discover"], "server/discover", false);
    assert!(
        discover["result"]["supportedVersions"].is_array(),
        "{discover}"
    );
    let call = message(&seen["call"], "tools/call", false);
    assert_eq!(call["result"]["content"][0]["text"], "from chromium");
    let init = message(&seen["initialize"], "initialize", true);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let session = seen["initialize"]["session"].as_str().unwrap_or_default();
    assert!(!session.is_empty(), "Mcp-Session-Id is exposed: {seen}");
    let list = message(&seen["legacyList"], "tools/list", true);
    assert!(list["result"]["tools"].is_array(), "{list}");

    // The same page from another origin (`localhost` is not `127.0.0.1` to a browser).
    let other = format!("http://localhost:{page_port}/page.html?{query}");
    let refused = report(&other, &mut reports).await;
    for call in ["discover", "call", "initialize"] {
        let error = refused[call]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("TypeError") || error.contains("Failed to fetch"),
            "{call}: the browser refused it: {refused}"
        );
    }
    assert!(refused.get("legacyList").is_none(), "{refused}");
}

//! `examples/mount_in_axum.rs` as a real process: an existing axum app (its own routes and
//! tower-http layers) with the MCP endpoint mounted in its router and served by its own
//! `axum::serve`. It answers MCP next to its own routes; at SIGTERM it stops gracefully: an
//! open listen stream gets its result and ends, a call in flight finishes, and the process
//! exits 0.

use serde_json::json;

use crate::support::Client;
use crate::support::example::ExampleProcess;
use crate::support::listen::Listener;

#[tokio::test(flavor = "multi_thread")]
async fn the_example_serves_mcp_in_its_own_app_and_drains_at_sigterm() {
    let mut app = ExampleProcess::start("mount_in_axum", &["127.0.0.1:0"], &[]);
    let line = app.wait_for("listening on ");
    let port = line.rsplit(':').next().unwrap().trim();
    let base = format!("http://localhost:{port}");
    // The app's own routes, with its own layers.
    let r = crate::support::get(format!("{base}/healthz"))
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), "ok");
    let r = crate::support::http()
        .get(format!("{base}/api/items"))
        .header("origin", "http://localhost:8000")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://localhost:8000"
    );
    // The MCP endpoint in its router.
    let client = Client::new(&format!("{base}/mcp"));
    let x = client
        .request(
            "tools/call",
            json!(1),
            json!({"name": "shout", "arguments": {"text": "mounted"}}),
        )
        .await;
    assert_eq!(x.status, 200, "{}", x.body);
    assert_eq!(x.result()["content"][0]["text"], "MOUNTED");

    // A listen stream and a call in flight when SIGTERM comes.
    let mut stream = Listener::open(&client, json!("l"), json!({"toolsListChanged": true})).await;
    assert_eq!(
        stream.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );
    let slow = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .request(
                    "tools/call",
                    json!(2),
                    json!({"name": "wait", "arguments": {"ms": 1500}}),
                )
                .await
        })
    };
    tokio::task::block_in_place(|| app.wait_for("waiting"));
    app.signal("TERM");

    let last = stream.next().await.expect("the listen stream's result");
    assert_eq!(last["id"], "l");
    assert_eq!(last["result"]["resultType"], "complete");
    assert!(stream.next().await.is_none(), "the stream ends");
    let x = slow.await.unwrap();
    assert_eq!(x.status, 200, "{}", x.body);
    assert_eq!(x.result()["content"][0]["text"], "waited 1500 ms");
    let status = tokio::task::block_in_place(|| app.wait());
    assert_eq!(status.code(), Some(0), "{status:?}");
    let lines = app.lines();
    assert!(
        lines.iter().any(|l| l.contains("drained; exiting")),
        "{lines:#?}"
    );
    assert!(
        crate::support::get(format!("{base}/healthz"))
            .await
            .is_err(),
        "nothing listens any more"
    );
}

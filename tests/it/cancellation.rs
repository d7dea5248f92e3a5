//! A client that goes away cancels its handler, on JSON and SSE replies alike.

use std::time::Duration;

use serde_json::{Value, json};
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
use tokio::sync::mpsc;

use crate::support::{Client, meta, start};

/// Sends on drop: tells the test that the handler's future was dropped (cancelled).
struct OnDrop(mpsc::UnboundedSender<&'static str>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

fn hanging_server(tx: mpsc::UnboundedSender<&'static str>) -> Server {
    Server::builder()
        .tool(
            ToolDef::new("hang")
                .description("Never finishes")
                .raw_handler(move |ctx: RequestContext, _args: Value| {
                    let guard = OnDrop(tx.clone());
                    let started = tx.clone();
                    async move {
                        let _guard = guard;
                        let _ = started.send("started");
                        ctx.progress(1.0, None, Some("started".into())).await;
                        std::future::pending::<()>().await;
                        Ok::<_, HandlerError>("never")
                    }
                }),
        )
        .build()
        .unwrap()
}

async fn abandon_call(url: &str, params_meta: Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "hang", "_meta": params_meta}});
    let mut req = crate::support::http()
        .post(url)
        .timeout(Duration::from_millis(300))
        .body(body.to_string());
    for (k, v) in Client::headers("tools/call", Some("hang")) {
        req = req.header(k, v);
    }
    // The response never completes; the timeout closes the connection.
    let _ = async {
        let resp = req.send().await?;
        resp.text().await
    }
    .await;
}

/// Waits (bounded, so a bug cannot hang the suite) for the handler's next signal.
async fn expect(rx: &mut mpsc::UnboundedReceiver<&'static str>, what: &'static str) {
    let got = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap_or_else(|_| panic!("no {what:?} signal from the handler"));
    assert_eq!(got, Some(what));
}

#[tokio::test]
async fn disconnect_cancels_a_json_reply_handler() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let srv = start(hanging_server(tx)).await;
    abandon_call(&srv.url, meta()).await;
    expect(&mut rx, "started").await;
    expect(&mut rx, "dropped").await;
}

#[tokio::test]
async fn disconnect_cancels_a_streaming_handler() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let srv = start(hanging_server(tx)).await;
    let mut m = meta();
    m["progressToken"] = json!("p");
    abandon_call(&srv.url, m).await;
    expect(&mut rx, "started").await;
    expect(&mut rx, "dropped").await;
}

//! Self-contained cursors: any replica with the same registry continues a list (in
//! process: two servers built alike stand for two replicas).

use serde_json::{Value, json};
use stateless_mcp::testing::TestClient;
use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};

use crate::support::in_process;

fn many_tools(n: usize) -> Server {
    let mut b = Server::builder().page_size(7);
    for i in 0..n {
        b = b.tool(
            ToolDef::new(format!("tool_{i:03}"))
                .description("t")
                .raw_handler(|_c: RequestContext, _a: Value| async { Ok::<_, HandlerError>("") }),
        );
    }
    b.build().unwrap()
}

async fn walk(clients: &[TestClient]) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0.. {
        let c = &clients[page % clients.len()];
        let params = match &cursor {
            Some(cur) => json!({"cursor": cur}),
            None => json!({}),
        };
        let x = c.request("tools/list", params).await.unwrap();
        let r = x.result().unwrap();
        assert_eq!(r["cacheScope"], "public");
        for t in r["tools"].as_array().unwrap() {
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        match r.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        assert!(page < 100, "pagination does not end");
    }
    names
}

#[tokio::test]
async fn a_cursor_from_one_replica_works_on_another() {
    let clients = [
        in_process::client(many_tools(30)),
        in_process::client(many_tools(30)),
    ];
    let names = walk(&clients).await;
    let expected: Vec<String> = (0..30).map(|i| format!("tool_{i:03}")).collect();
    assert_eq!(
        names, expected,
        "every tool once, in registration order, across replicas"
    );
    let listed: Vec<String> = clients[1]
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, expected, "the test client follows every page");
    assert_eq!(clients[0].list_pages("tools/list").await.unwrap().len(), 5);
}

#[tokio::test]
async fn a_cursor_of_another_list_or_version_is_invalid() {
    let ca = in_process::client(many_tools(30));
    let cb = in_process::client(many_tools(31));
    let first = ca.request("tools/list", json!({})).await.unwrap();
    let cursor = first.result().unwrap()["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let other_version = cb
        .request("tools/list", json!({"cursor": cursor}))
        .await
        .unwrap();
    assert_eq!(other_version.error().unwrap().code, -32602);
    let x = ca
        .request("tools/list", json!({"cursor": "bm90LWEtY3Vyc29y"}))
        .await
        .unwrap();
    let e = x.error().unwrap();
    assert_eq!(e.code, -32602);
    assert_eq!(e.message, "Invalid cursor");
}

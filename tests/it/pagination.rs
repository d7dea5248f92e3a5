//! Self-contained cursors: any replica with the same registry continues a list.

use serde_json::{Value, json};
use stateless_mcp::{RequestContext, Server, ToolDef, ToolError};

use crate::support::{Client, start};

fn many_tools(n: usize) -> Server {
    let mut b = Server::builder().page_size(7);
    for i in 0..n {
        b = b.tool(
            ToolDef::new(format!("tool_{i:03}"))
                .description("t")
                .raw_handler(|_c: RequestContext, _a: Value| async { Ok::<_, ToolError>("") }),
        );
    }
    b.build().unwrap()
}

async fn walk(clients: &[Client]) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0.. {
        let c = &clients[page % clients.len()];
        let params = match &cursor {
            Some(cur) => json!({"cursor": cur}),
            None => json!({}),
        };
        let x = c.request("tools/list", json!(page), params).await;
        let r = x.result();
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
    let (a, b) = (start(many_tools(30)).await, start(many_tools(30)).await);
    let clients = [Client::new(&a.url), Client::new(&b.url)];
    let names = walk(&clients).await;
    let expected: Vec<String> = (0..30).map(|i| format!("tool_{i:03}")).collect();
    assert_eq!(
        names, expected,
        "every tool once, in registration order, across replicas"
    );
}

#[tokio::test]
async fn a_cursor_of_another_list_or_version_is_invalid() {
    let (a, b) = (start(many_tools(30)).await, start(many_tools(31)).await);
    let ca = Client::new(&a.url);
    let first = ca.request("tools/list", json!(1), json!({})).await;
    let cursor = first.result()["nextCursor"].as_str().unwrap().to_owned();
    let other_version = Client::new(&b.url)
        .request("tools/list", json!(2), json!({"cursor": cursor}))
        .await;
    assert_eq!(other_version.error_code(), -32602);
    let x = ca
        .request(
            "tools/list",
            json!(3),
            json!({"cursor": "bm90LWEtY3Vyc29y"}),
        )
        .await;
    assert_eq!(x.error_code(), -32602);
    assert_eq!(x.response()["error"]["message"], "Invalid cursor");
}

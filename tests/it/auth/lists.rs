//! Lists show only what the token may use, and are then private to the caller; tools added
//! and replaced at runtime too.

use serde_json::{Value, json};

use super::{protect, protected};

fn names(result: &Value, key: &str, field: &str) -> Vec<String> {
    result[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[field].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn lists_are_filtered_by_scope_and_private() {
    let p = protected(|b| b).await;
    let token = p.token("mcp files:read");
    let ex = p.call(&token, "tools/list", json!({})).await;
    assert_eq!(names(ex.result(), "tools", "name"), ["read_file", "whoami"]);
    assert_eq!(ex.result()["cacheScope"], "private");
    let ex = p.call(&token, "resources/list", json!({})).await;
    assert_eq!(
        names(ex.result(), "resources", "uri"),
        ["test://public", "test://private"]
    );
    assert_eq!(ex.result()["cacheScope"], "private");
    let ex = p.call(&token, "resources/templates/list", json!({})).await;
    assert!(names(ex.result(), "resourceTemplates", "uriTemplate").is_empty());
    assert_eq!(ex.result()["cacheScope"], "private");
    let ex = p.call(&token, "prompts/list", json!({})).await;
    assert_eq!(names(ex.result(), "prompts", "name"), ["open_prompt"]);
    assert_eq!(ex.result()["cacheScope"], "private");

    let everything = p.token("mcp files docs prompts");
    let ex = p.call(&everything, "tools/list", json!({})).await;
    assert_eq!(
        names(ex.result(), "tools", "name"),
        ["read_file", "write_file", "whoami"]
    );
    assert_eq!(ex.result()["cacheScope"], "private");
    let ex = p
        .call(&everything, "resources/templates/list", json!({}))
        .await;
    assert_eq!(names(ex.result(), "resourceTemplates", "name"), ["docs"]);
    let ex = p.call(&everything, "prompts/list", json!({})).await;
    assert_eq!(
        names(ex.result(), "prompts", "name"),
        ["secret_prompt", "open_prompt"]
    );

    let bare = p.token("mcp");
    let ex = p.call(&bare, "tools/list", json!({})).await;
    assert_eq!(names(ex.result(), "tools", "name"), ["whoami"]);
}

#[tokio::test]
async fn filtered_lists_paginate_over_what_the_caller_sees() {
    use stateless_mcp::{HandlerError, Server, ToolDef};
    let mut b = Server::builder().page_size(2);
    for i in 0..5 {
        let t =
            ToolDef::new(format!("t{i}")).raw_handler(|_, _| async { Ok::<_, HandlerError>("x") });
        b = b.tool(if i % 2 == 0 { t } else { t.scopes(["odd"]) });
    }
    let p = protect(b.build().unwrap(), |b| b).await;
    let token = p.token("even-only");
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let ex = p.call(&token, "tools/list", params).await;
        seen.extend(names(ex.result(), "tools", "name"));
        match ex.result().get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ["t0", "t2", "t4"]);
}

#[tokio::test]
async fn lists_without_declared_scopes_stay_public() {
    let p = protect(crate::support::fixtures_server(), |b| b).await;
    let ex = p.call(&p.token(""), "tools/list", json!({})).await;
    assert_eq!(ex.status, 200);
    assert_eq!(ex.result()["cacheScope"], "public");
}

#[tokio::test]
async fn a_scoped_tool_added_at_runtime_is_seen_and_called_only_with_its_scope() {
    use stateless_mcp::{HandlerError, Server, ToolDef};
    let tool = |n: &str| ToolDef::new(n).raw_handler(|_, _| async { Ok::<_, HandlerError>("x") });
    let server = Server::builder().tool(tool("open")).build().unwrap();
    let catalog = server.catalog();
    let p = protect(server, |b| b).await;
    let (plain, admin) = (p.token("tenant"), p.token("tenant admin"));
    let ex = p.call(&plain, "tools/list", json!({})).await;
    assert_eq!(names(ex.result(), "tools", "name"), ["open"]);
    assert_eq!(ex.result()["cacheScope"], "public");

    catalog
        .change()
        .add_tool(tool("wipe").scopes(["admin"]))
        .apply()
        .unwrap();
    let ex = p.call(&plain, "tools/list", json!({})).await;
    assert_eq!(names(ex.result(), "tools", "name"), ["open"]);
    assert_eq!(ex.result()["cacheScope"], "private");
    let ex = p.call(&admin, "tools/list", json!({})).await;
    assert_eq!(names(ex.result(), "tools", "name"), ["open", "wipe"]);
    let refused = p.send_tool(Some(&plain), "wipe").await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.json()["error"], "insufficient_scope");
    let called = p.call_tool(&admin, "wipe").await;
    assert_eq!(called.result()["content"][0]["text"], "x");

    // Replaced without its scope: everyone sees it; removed: the list is public again.
    catalog.change().replace_tool(tool("wipe")).apply().unwrap();
    let ex = p.call(&plain, "tools/list", json!({})).await;
    assert_eq!(names(ex.result(), "tools", "name"), ["open", "wipe"]);
    catalog.change().remove_tool("wipe").apply().unwrap();
    let ex = p.call(&plain, "tools/list", json!({})).await;
    assert_eq!(names(ex.result(), "tools", "name"), ["open"]);
    assert_eq!(ex.result()["cacheScope"], "public");
}

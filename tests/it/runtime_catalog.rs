//! Tools, prompts and resources changed at runtime through `Server::catalog`: served at once,
//! announced to this replica's listen and legacy GET streams, refused changes without
//! effect, no torn pages under concurrent changes, running calls finish as they started.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use stateless_mcp::handler::PromptArguments;
use stateless_mcp::protocol::{GetPromptResult, PromptMessage, ResourceContents};
use stateless_mcp::{
    ErrorKind, HandlerError, PromptDef, RequestContext, ResourceDef, Server, ToolDef,
};

use crate::support::legacy::LegacyClient;
use crate::support::listen::Listener;
use crate::support::{Client, start};

fn answering(name: &str, answer: &'static str) -> ToolDef {
    ToolDef::new(name).raw_handler(move |_: RequestContext, _: Value| async move {
        Ok::<_, HandlerError>(answer)
    })
}

fn tool(name: &str) -> ToolDef {
    answering(name, "ok")
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .map(|t| t[field].as_str().unwrap().to_owned())
        .collect()
}

async fn tool_names(c: &Client) -> Vec<String> {
    let x = c.request("tools/list", json!(1), json!({})).await;
    names(x.result(), "tools", "name")
}

async fn call(c: &Client, name: &str) -> crate::support::Exchange {
    c.request(
        "tools/call",
        json!(2),
        json!({"name": name, "arguments": {}}),
    )
    .await
}

fn text_of(x: &crate::support::Exchange) -> String {
    x.result()["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {}", x.response()))
        .to_owned()
}

#[tokio::test]
async fn a_change_is_served_at_once_and_heard_on_listen_streams() {
    let server = Server::builder()
        .tool(tool("a"))
        .advertise_prompts()
        .build()
        .unwrap();
    let catalog = server.catalog();
    let srv = start(server).await;
    let c = Client::new(&srv.url);
    let mut l = Listener::open(
        &c,
        json!("l"),
        json!({"toolsListChanged": true, "promptsListChanged": true}),
    )
    .await;
    assert_eq!(
        l.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(catalog.version(), 1);

    let applied = catalog.change().add_tool(tool("b")).apply().unwrap();
    assert_eq!(applied.version(), 2);
    assert_eq!(l.next_kind().await, "notifications/tools/list_changed");
    assert_eq!(tool_names(&c).await, ["a", "b"]);
    assert_eq!(text_of(&call(&c, "b").await), "ok");

    // A batch: one version, one notification per list it changed.
    catalog
        .change()
        .remove_tool("a")
        .add_prompt(
            PromptDef::new("p").handler(|_: RequestContext, _: PromptArguments| async {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text("hi")]))
            }),
        )
        .apply()
        .unwrap();
    assert_eq!(catalog.version(), 3);
    let mut heard = vec![l.next_kind().await, l.next_kind().await];
    heard.sort();
    assert_eq!(
        heard,
        [
            "notifications/prompts/list_changed",
            "notifications/tools/list_changed"
        ]
    );
    // A tool removed a moment ago is an unknown tool.
    let gone = call(&c, "a").await;
    assert_eq!(gone.error_code(), -32602, "{}", gone.body);
    assert!(gone.body.contains("Unknown tool: a"), "{}", gone.body);
    let prompts = c.request("prompts/list", json!(3), json!({})).await;
    assert_eq!(names(prompts.result(), "prompts", "name"), ["p"]);

    // Replacing with an equal definition changes no list: nothing to hear.
    catalog.change().replace_tool(tool("b")).apply().unwrap();
    catalog
        .change()
        .replace_tool(answering("b", "new"))
        .add_tool(tool("c"))
        .apply()
        .unwrap();
    assert_eq!(l.next_kind().await, "notifications/tools/list_changed");
    assert_eq!(text_of(&call(&c, "b").await), "new");
}

/// A served server with the tools `a` and `b`, one per page.
async fn serve_a_and_b() -> (
    stateless_mcp::catalog::Catalog,
    crate::support::TestServer,
    Client,
) {
    let server = Server::builder()
        .tool(tool("a"))
        .tool(tool("b"))
        .page_size(1)
        .build()
        .unwrap();
    let catalog = server.catalog();
    let srv = start(server).await;
    let c = Client::new(&srv.url);
    (catalog, srv, c)
}

#[tokio::test]
async fn a_refused_change_leaves_everything_byte_identical() {
    let (catalog, _srv, c) = serve_a_and_b().await;
    let before = c.request("tools/list", json!(1), json!({})).await.body;
    let fingerprints = (catalog.version(), catalog.tool_names());

    let bad_schema = {
        let s =
            json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}});
        tool("bad").input_schema(s.as_object().unwrap().clone())
    };
    let refusals: Vec<(stateless_mcp::catalog::CatalogChange, &str)> = vec![
        (
            catalog.change().add_tool(tool("c")).add_tool(tool("a")),
            "\"a\"",
        ),
        (catalog.change().add_tool(tool("has space")), "has space"),
        (catalog.change().add_tool(bad_schema), "\"bad\""),
        (
            catalog.change().remove_tool("a").remove_tool("zz"),
            "\"zz\"",
        ),
        (
            catalog.change().add_tool(ToolDef::new("nohandler")),
            "nohandler",
        ),
        (
            catalog
                .change()
                .add_tool(ToolDef::new("needs_state").handler(
                    |_: RequestContext, _: stateless_mcp::State<u8>, _: NoArgs| async {
                        Ok::<_, HandlerError>("x")
                    },
                )),
            "needs_state",
        ),
        // The server was built without resources: it cannot start serving some.
        (
            catalog.change().add_resource(
                ResourceDef::new("test://r", "r")
                    .handler(|_, uri| async move { Ok(ResourceContents::text(uri, "x")) }),
            ),
            "test://r",
        ),
    ];
    for (change, names_the_item) in refusals {
        let e = change.apply().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidDefinition, "{e}");
        assert!(e.to_string().contains(names_the_item), "{e}");
    }
    assert_eq!((catalog.version(), catalog.tool_names()), fingerprints);
    assert_eq!(
        c.request("tools/list", json!(1), json!({})).await.body,
        before
    );
    assert_eq!(catalog.tool_names(), ["a", "b"]);
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[tokio::test]
async fn a_cursor_from_an_older_version_is_refused() {
    let (catalog, _srv, c) = serve_a_and_b().await;
    let first = c.request("tools/list", json!(1), json!({})).await;
    let cursor = first.result()["nextCursor"].as_str().unwrap().to_owned();
    catalog.change().add_tool(tool("c")).apply().unwrap();
    let stale = c
        .request("tools/list", json!(2), json!({"cursor": cursor}))
        .await;
    assert_eq!(stale.error_code(), -32602, "{}", stale.body);
    // Removing what was added restores the same list: its cursors are good again.
    catalog.change().remove_tool("c").apply().unwrap();
    let again = c
        .request("tools/list", json!(3), json!({"cursor": cursor}))
        .await;
    assert_eq!(names(again.result(), "tools", "name"), ["b"]);
}

#[tokio::test]
async fn a_running_call_finishes_with_the_definition_it_started_with() {
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = release.clone();
    let (started_tx, started) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Arc::new(std::sync::Mutex::new(Some(started_tx)));
    let slow = ToolDef::new("slow").raw_handler(move |_: RequestContext, _: Value| {
        let gate = gate.clone();
        let started = started_tx.lock().unwrap().take();
        async move {
            if let Some(started) = started {
                let _ = started.send(());
            }
            gate.notified().await;
            Ok::<_, HandlerError>("first definition")
        }
    });
    let server = Server::builder().tool(slow).build().unwrap();
    let catalog = server.catalog();
    let srv = start(server).await;
    let c = Client::new(&srv.url);
    let running = tokio::spawn({
        let c = Client::new(&srv.url);
        async move { call(&c, "slow").await }
    });
    // Once the call runs (it holds the first definition), replace and remove the tool.
    started.await.expect("the first call started");
    catalog
        .change()
        .replace_tool(answering("slow", "second definition"))
        .apply()
        .unwrap();
    assert_eq!(text_of(&call(&c, "slow").await), "second definition");
    catalog.change().remove_tool("slow").apply().unwrap();
    release.notify_one();
    let x = running.await.unwrap();
    assert_eq!(text_of(&x), "first definition");
    assert_eq!(call(&c, "slow").await.error_code(), -32602);
}

/// Each version `v` serves the tools `v{v}-0` … `v{v}-6`: a page listing tools of two
/// versions would be a torn read.
fn version_tools(v: usize) -> Vec<ToolDef> {
    (0..7).map(|i| tool(&format!("v{v}-{i}"))).collect()
}

#[tokio::test]
async fn concurrent_changes_lists_and_calls_never_see_a_torn_version() {
    let mut b = Server::builder().page_size(3);
    for t in version_tools(0) {
        b = b.tool(t);
    }
    let server = b.build().unwrap();
    let catalog = server.catalog();
    let srv = start(server).await;
    let url = srv.url.clone();
    let changes = 60;
    let changer = tokio::task::spawn_blocking(move || {
        for v in 1..=changes {
            let mut change = catalog.change();
            for name in catalog.tool_names() {
                change = change.remove_tool(name);
            }
            for t in version_tools(v) {
                change = change.add_tool(t);
            }
            change.apply().unwrap();
            // And a replacement in place: same names, a new description.
            let replaced = tool(&format!("v{v}-3")).description("replaced");
            catalog.change().replace_tool(replaced).apply().unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        catalog
    });
    let mut readers = Vec::new();
    for r in 0..4 {
        let c = Client::new(&url);
        readers.push(tokio::spawn(async move {
            let (mut walks, mut stale, mut calls) = (0, 0, 0);
            for round in 0..40 {
                // Walk the list by its cursors; every page within one version.
                let mut cursor: Option<String> = None;
                let mut seen = Vec::new();
                loop {
                    let params = match &cursor {
                        Some(c) => json!({"cursor": c}),
                        None => json!({}),
                    };
                    let x = c.request("tools/list", json!(round), params).await;
                    if x.response().get("error").is_some() {
                        assert_eq!(x.error_code(), -32602, "{}", x.body);
                        stale += 1;
                        break;
                    }
                    let page = names(x.result(), "tools", "name");
                    let version = |n: &String| n.split('-').next().unwrap().to_owned();
                    let v = version(&page[0]);
                    assert!(page.iter().all(|n| version(n) == v), "torn page {page:?}");
                    assert!(
                        seen.iter().all(|n: &String| version(n) == v),
                        "walk crossed versions: {seen:?} then {page:?}"
                    );
                    seen.extend(page);
                    match x.result()["nextCursor"].as_str() {
                        Some(next) => cursor = Some(next.to_owned()),
                        None => {
                            assert_eq!(seen.len(), 7, "{seen:?}");
                            walks += 1;
                            break;
                        }
                    }
                }
                // A call names a tool of some version: it runs or is an unknown tool.
                let x = call(&c, &format!("v{}-{}", (round * 3 + r) % 60, r)).await;
                match x.response().get("error") {
                    Some(_) => assert_eq!(x.error_code(), -32602, "{}", x.body),
                    None => {
                        assert_eq!(text_of(&x), "ok");
                        calls += 1;
                    }
                }
            }
            (walks, stale, calls)
        }));
    }
    let catalog = changer.await.unwrap();
    let mut walks = 0;
    for r in readers {
        let (w, _stale, _calls) = r.await.unwrap();
        walks += w;
    }
    assert!(walks > 0, "no list walk completed");
    assert_eq!(catalog.version(), 1 + 2 * changes as u64);
    let c = Client::new(&url);
    let last: Vec<String> = (0..7).map(|i| format!("v{changes}-{i}")).collect();
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let x = c.request("tools/list", json!(9), params).await;
        all.extend(names(x.result(), "tools", "name"));
        match x.result()["nextCursor"].as_str() {
            Some(n) => cursor = Some(n.to_owned()),
            None => break,
        }
    }
    assert_eq!(all, last);
}

#[tokio::test]
async fn a_legacy_get_stream_hears_a_local_change() {
    let server = Server::builder().tool(tool("a")).build().unwrap();
    let catalog = server.catalog();
    let srv = start(server).await;
    let c = LegacyClient::connect(&srv.url, json!({})).await;
    let mut stream = c.open_stream().await;
    assert_eq!(stream.status, 200);
    catalog.change().add_tool(tool("b")).apply().unwrap();
    let m = stream.next().await.unwrap();
    assert_eq!(
        m,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    let listed = c.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(names(listed.result(), "tools", "name"), ["a", "b"]);
}

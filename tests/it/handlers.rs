//! Handler behaviour: typed tools, structured output, templates, prompts, completions,
//! panic isolation and concurrency, through the in-process test client (dispatch only, no
//! sockets; every message checked against the schema).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stateless_mcp::handler::{PromptArguments, TemplateVars};
use stateless_mcp::protocol::{CompleteResult, ResourceContents};
use stateless_mcp::{HandlerError, RequestContext, ResourceTemplateDef, Server, ToolDef};
use tokio::sync::Barrier;

use crate::support::{fixtures_server, in_process};

#[derive(Deserialize, JsonSchema)]
struct Div {
    /// Dividend.
    a: i64,
    /// Divisor.
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Quotient {
    q: i64,
}

fn calculator() -> Server {
    Server::builder()
        .tool(
            ToolDef::new("div")
                .description("Integer division")
                .structured_handler(|_ctx: RequestContext, args: Div| async move {
                    if args.b == 0 {
                        return Err(HandlerError::new("division by zero: b must not be 0"));
                    }
                    Ok(Quotient { q: args.a / args.b })
                }),
        )
        .tool(ToolDef::new("boom").description("Panics").raw_handler(
            |_ctx: RequestContext, _args: Value| async move {
                if true {
                    panic!("handler bug");
                }
                Ok::<_, HandlerError>("unreachable")
            },
        ))
        .build()
        .unwrap()
}

#[tokio::test]
async fn typed_tool_lists_its_schemas_and_returns_structured_content() {
    let c = in_process::client(calculator());
    let list = c.request("tools/list", Value::Null).await.unwrap();
    let div = &list.result().unwrap()["tools"][0];
    assert_eq!(div["name"], "div");
    assert_eq!(div["inputSchema"]["type"], "object");
    assert_eq!(div["inputSchema"]["required"], json!(["a", "b"]));
    assert!(div["outputSchema"]["properties"]["q"].is_object(), "{div}");

    let r = c
        .call_tool("div")
        .arguments(&json!({"a": 7, "b": 2}))
        .result()
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"q": 3})));
    let mirror: Value = serde_json::from_str(r.content[0].as_text().unwrap()).unwrap();
    assert_eq!(mirror, json!({"q": 3}), "text mirror of structuredContent");
    let q: Value = c
        .call_tool("div")
        .arguments(&json!({"a": 9, "b": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(q, json!({"q": 4}), "typed output from structuredContent");
}

#[tokio::test]
async fn tool_failures_are_results_the_model_can_read() {
    let c = in_process::client(calculator());
    let x = c
        .request(
            "tools/call",
            json!({"name": "div", "arguments": {"a": 1, "b": 0}}),
        )
        .await
        .unwrap();
    assert_eq!(x.http_status, 200);
    assert_eq!(x.result().unwrap()["isError"], true);
    assert!(
        x.result().unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("division by zero")
    );

    let x = c
        .request(
            "tools/call",
            json!({"name": "div", "arguments": {"a": "x"}}),
        )
        .await
        .unwrap();
    assert_eq!(x.http_status, 200);
    assert_eq!(x.result().unwrap()["isError"], true);
    let text = x.result().unwrap()["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Invalid arguments for tool div"), "{text}");
    assert!(
        text.contains("\"b\"") || text.contains("/a"),
        "names the problem: {text}"
    );
}

#[tokio::test]
async fn a_panicking_handler_fails_only_its_request() {
    let c = in_process::client(calculator());
    let x = c
        .request("tools/call", json!({"name": "boom"}))
        .await
        .unwrap();
    assert_eq!(x.error().unwrap().code, -32603);
    assert_eq!(x.message["id"], x.request_id);
    assert!(
        !x.message.to_string().contains("handler bug"),
        "panic details stay in the logs"
    );
    let after = c
        .request(
            "tools/call",
            json!({"name": "div", "arguments": {"a": 4, "b": 2}}),
        )
        .await
        .unwrap();
    assert_eq!(
        after.result().unwrap()["structuredContent"],
        json!({"q": 2})
    );
}

#[tokio::test]
async fn requests_run_concurrently() {
    // Each call waits at a barrier for N calls: they finish only if all N run at once.
    const N: usize = 8;
    let barrier = Arc::new(Barrier::new(N));
    let server = Server::builder()
        .tool(
            ToolDef::new("meet")
                .description("Waits for the others")
                .raw_handler(move |_ctx: RequestContext, _args: Value| {
                    let b = barrier.clone();
                    async move {
                        b.wait().await;
                        Ok::<_, HandlerError>("met")
                    }
                }),
        )
        .build()
        .unwrap();
    let c = in_process::client(server);
    let calls = (0..N).map(|_| c.call_tool("meet").send::<String>());
    for x in futures_util::future::join_all(calls).await {
        assert_eq!(x.unwrap(), "met");
    }
}

#[tokio::test]
async fn templates_bind_variables_and_fixed_resources_win() {
    let server = Server::builder()
        .resource_template(
            ResourceTemplateDef::new("files:///{+path}", "files")
                .description("Files")
                .handler(|_ctx, uri, vars: TemplateVars| async move {
                    let path = vars.get("path").cloned().unwrap_or_default();
                    if path.contains("..") {
                        return Err(stateless_mcp::Error::invalid_params(
                            "path traversal is not allowed",
                        )
                        .into());
                    }
                    if path == "missing.txt" {
                        return Err(stateless_mcp::Error::resource_not_found(uri).into());
                    }
                    Ok(ResourceContents::text(uri, format!("contents of {path}")))
                }),
        )
        .resource(
            stateless_mcp::ResourceDef::new("files:///special", "special")
                .handler(|_ctx, uri| async move { Ok(ResourceContents::text(uri, "fixed")) }),
        )
        .build()
        .unwrap();
    let c = in_process::client(server);
    let x = c
        .request("resources/read", json!({"uri": "files:///docs/a%20b.md"}))
        .await
        .unwrap();
    assert_eq!(
        x.result().unwrap()["contents"][0]["text"],
        "contents of docs/a b.md"
    );
    assert_eq!(x.result().unwrap()["ttlMs"], 0);
    let x = c
        .request("resources/read", json!({"uri": "files:///special"}))
        .await
        .unwrap();
    assert_eq!(x.result().unwrap()["contents"][0]["text"], "fixed");
    let x = c
        .request("resources/read", json!({"uri": "files:///missing.txt"}))
        .await
        .unwrap();
    assert_eq!(x.error().unwrap().code, -32602);
    assert_eq!(x.message["error"]["data"]["uri"], "files:///missing.txt");
    let x = c
        .request("resources/read", json!({"uri": "files:///../etc/passwd"}))
        .await
        .unwrap();
    assert_eq!(x.error().unwrap().code, -32602);
    let x = c
        .request("resources/read", json!({"uri": "other://x"}))
        .await
        .unwrap();
    assert_eq!(x.error().unwrap().code, -32602);
    let t = c
        .request("resources/templates/list", Value::Null)
        .await
        .unwrap();
    assert_eq!(
        t.result().unwrap()["resourceTemplates"][0]["uriTemplate"],
        "files:///{+path}"
    );
}

#[tokio::test]
async fn completions_are_capped_at_100() {
    let server = Server::builder()
        .prompt(stateless_mcp::PromptDef::new("p").description("p").handler(
            |_ctx, _args: PromptArguments| async {
                Ok(stateless_mcp::protocol::GetPromptResult::new(vec![]))
            },
        ))
        .completion(
            |_ctx, _req: stateless_mcp::protocol::CompleteRequest| async {
                Ok(CompleteResult::from_values(
                    (0..250).map(|i| format!("v{i}")).collect(),
                ))
            },
        )
        .build()
        .unwrap();
    let c = in_process::client(server);
    let x = c
        .request("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
        )
        .await.unwrap();
    let comp = &x.result().unwrap()["completion"];
    assert_eq!(comp["values"].as_array().unwrap().len(), 100);
    assert_eq!(comp["total"], 250);
    assert_eq!(comp["hasMore"], true);
}

#[tokio::test]
async fn fixtures_complete_prompt_arguments_by_prefix() {
    let c = in_process::client(fixtures_server());
    let x = c
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "par"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        x.result().unwrap()["completion"]["values"],
        json!(["paris", "park", "party"])
    );
}

#[test]
fn invalid_definitions_fail_at_build() {
    let dup = Server::builder()
        .tool(
            ToolDef::new("a")
                .raw_handler(|_c: RequestContext, _a: Value| async { Ok::<_, HandlerError>("") }),
        )
        .tool(
            ToolDef::new("a")
                .raw_handler(|_c: RequestContext, _a: Value| async { Ok::<_, HandlerError>("") }),
        )
        .build();
    assert!(dup.unwrap_err().to_string().contains("duplicate tool name"));
    let bad_header = Server::builder()
        .tool(
            ToolDef::new("t")
                .input_schema(
                    json!({"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}})
                        .as_object()
                        .unwrap()
                        .clone(),
                )
                .raw_handler(|_c: RequestContext, _a: Value| async { Ok::<_, HandlerError>("") }),
        )
        .build();
    assert!(bad_header.unwrap_err().to_string().contains("x-mcp-header"));
    let bad_template =
        Server::builder()
            .resource_template(ResourceTemplateDef::new("x://{unclosed", "t").handler(
                |_c, u, _v: TemplateVars| async move { Ok(ResourceContents::text(u, "")) },
            ))
            .build();
    assert!(bad_template.is_err());
}

#[tokio::test]
async fn output_that_breaks_the_output_schema_is_an_internal_error() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let tool = |name: &str, out: Value| {
        ToolDef::new(name)
            .description("declares an output schema")
            .output_schema(schema.as_object().unwrap().clone())
            .raw_handler(move |_c: RequestContext, _a: Value| {
                let out = out.clone();
                async move {
                    Ok::<_, HandlerError>(stateless_mcp::protocol::CallToolResult::structured(out))
                }
            })
    };
    let server = Server::builder()
        .tool(tool("good", json!({"n": 1})))
        .tool(tool("bad", json!({"n": "one"})))
        .tool(
            ToolDef::new("plain")
                .description("forgets structuredContent")
                .output_schema(schema.as_object().unwrap().clone())
                .raw_handler(|_c: RequestContext, _a: Value| async {
                    Ok::<_, HandlerError>("text only")
                }),
        )
        .build()
        .unwrap();
    let c = in_process::client(server);
    let ok = c
        .request("tools/call", json!({"name": "good"}))
        .await
        .unwrap();
    assert_eq!(ok.result().unwrap()["structuredContent"], json!({"n": 1}));
    for name in ["bad", "plain"] {
        let x = c
            .request("tools/call", json!({"name": name}))
            .await
            .unwrap();
        assert_eq!(x.error().unwrap().code, -32603, "{name}");
        assert_eq!(x.http_status, 500);
    }
}

//! Application state in every handler kind, the one error story (what is logged, what the
//! client sees), tool annotations, typed template variables and prompt arguments, and
//! typed form elicitation. Dispatch only, so through the in-process test client (every
//! message checked against the schema).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use stateless_mcp::protocol::{
    CompleteRequest, CompleteResult, GetPromptResult, PromptMessage, ResourceContents,
};
use stateless_mcp::{
    Error, HandlerError, InputRequired, PromptDef, RequestContext, ResourceDef,
    ResourceTemplateDef, Server, State, ToolDef,
};

use stateless_mcp::testing::{Answer, TestClient};

use crate::support::in_process;

/// The application state: a hit counter shared by every handler.
#[derive(Clone, Default)]
struct Hits(Arc<AtomicUsize>);

impl Hits {
    fn hit(&self) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
    /// How many exclamation marks.
    excitement: Option<u8>,
}

#[derive(Deserialize)]
struct Page {
    book: String,
    page: u32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Colour {
    Red,
    Blue,
}

#[derive(Deserialize, JsonSchema)]
struct Preferences {
    /// Your favourite colour.
    colour: Colour,
    /// Send a newsletter?
    newsletter: bool,
}

fn server(hits: Hits) -> Server {
    Server::builder()
        .state(hits)
        .tool(
            ToolDef::new("hit")
                .read_only(false)
                .idempotent(false)
                .open_world(false)
                .handler(
                    |_ctx: RequestContext, State(hits): State<Hits>, _: NoArgs| async move {
                        Ok::<_, HandlerError>(format!("tool {}", hits.hit()))
                    },
                ),
        )
        .tool(
            ToolDef::new("io_fails").handler(|_ctx: RequestContext, _: NoArgs| async move {
                std::fs::read_to_string("/nonexistent/secret/db.conf")?;
                Ok::<_, HandlerError>("unreachable")
            }),
        )
        .tool(
            ToolDef::new("anyhow_fails").handler(|_ctx: RequestContext, _: NoArgs| async move {
                let r: anyhow::Result<()> =
                    Err(anyhow::anyhow!("SELECT * FROM users; -- at db-7.internal"));
                r?;
                Ok::<_, HandlerError>("unreachable")
            }),
        )
        .tool(
            ToolDef::new("says_why").handler(|_ctx: RequestContext, _: NoArgs| async move {
                Err::<String, _>(HandlerError::new("the quota is used up; try tomorrow"))
            }),
        )
        .tool(
            ToolDef::new("preferences").handler(|ctx: RequestContext, _: NoArgs| async move {
                match ctx.input().accepted::<Preferences>("prefs") {
                    Some(p) => Ok(format!(
                        "{} {}",
                        match p.colour {
                            Colour::Red => "red",
                            Colour::Blue => "blue",
                        },
                        p.newsletter
                    )),
                    None => Err(InputRequired::new()
                        .elicit::<Preferences>("prefs", "Your preferences?")?
                        .into()),
                }
            }),
        )
        .tool(
            ToolDef::new("bad_form").handler(|_ctx: RequestContext, _: NoArgs| async move {
                Err::<String, _>(InputRequired::new().elicit::<Greeting2>("g", "?")?.into())
            }),
        )
        .resource(ResourceDef::new("app://hits", "hits").handler(
            |_ctx: RequestContext, State(hits): State<Hits>, uri: String| async move {
                Ok(ResourceContents::text(
                    uri,
                    format!("resource {}", hits.hit()),
                ))
            },
        ))
        .resource(ResourceDef::new("app://broken", "broken").handler(
            |_ctx, _uri: String| async move {
                std::fs::read_to_string("/nonexistent/secret/resource")?;
                Ok(ResourceContents::text("app://broken", ""))
            },
        ))
        .resource_template(
            ResourceTemplateDef::new("books://{book}/pages/{page}", "page").handler(
                |_ctx: RequestContext, State(hits): State<Hits>, uri: String, p: Page| async move {
                    hits.hit();
                    Ok(ResourceContents::text(
                        uri,
                        format!("{} page {}", p.book, p.page),
                    ))
                },
            ),
        )
        .prompt(PromptDef::new("greet").handler(
            |_ctx: RequestContext, State(hits): State<Hits>, g: Greeting| async move {
                let marks = "!".repeat(usize::from(g.excitement.unwrap_or(1)));
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                    format!("Hello {}{marks} (#{})", g.name, hits.hit()),
                )]))
            },
        ))
        .prompt(
            PromptDef::new("refuses").handler(|_ctx: RequestContext, _: NoArgs| async move {
                Err(HandlerError::new("prompts are closed for maintenance"))
            }),
        )
        .completion(
            |_ctx: RequestContext, State(hits): State<Hits>, req: CompleteRequest| async move {
                if req.argument.value == "boom" {
                    return Err(Error::invalid_params("no completions for boom").into());
                }
                Ok(CompleteResult::from_values(vec![format!(
                    "v{}",
                    hits.hit()
                )]))
            },
        )
        .build()
        .unwrap()
}

/// A struct the restricted form schema cannot express (a nested struct).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Greeting2 {
    inner: Preferences,
}

async fn tool(c: &TestClient, name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    c.request("tools/call", params).await.unwrap().message
}

#[tokio::test]
async fn one_state_reaches_every_handler_kind() {
    let hits = Hits::default();
    let c = in_process::client(server(hits.clone()));
    assert_eq!(
        tool(&c, "hit", json!({})).await["result"]["content"][0]["text"],
        "tool 1"
    );
    let r = c
        .request("resources/read", json!({"uri": "app://hits"}))
        .await
        .unwrap();
    assert_eq!(r.result().unwrap()["contents"][0]["text"], "resource 2");
    let r = c
        .request("resources/read", json!({"uri": "books://dune/pages/42"}))
        .await
        .unwrap();
    assert_eq!(r.result().unwrap()["contents"][0]["text"], "dune page 42");
    let r = c
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada", "excitement": "3"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        r.result().unwrap()["messages"][0]["content"]["text"],
        "Hello Ada!!! (#4)"
    );
    let r = c
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": "A"}}),
        )
        .await
        .unwrap();
    assert_eq!(r.result().unwrap()["completion"]["values"], json!(["v5"]));
    assert_eq!(hits.0.load(Ordering::SeqCst), 5, "one shared value");
}

#[test]
fn a_state_nobody_registered_fails_the_build_naming_its_type() {
    let e = Server::builder()
        .tool(ToolDef::new("hit").handler(
            |_ctx: RequestContext, State(hits): State<Hits>, _: NoArgs| async move {
                Ok::<_, HandlerError>(hits.hit().to_string())
            },
        ))
        .build()
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("Hits") && text.contains("\"hit\""), "{text}");
    let e = Server::builder()
        .prompt(PromptDef::new("p").handler(
            |_ctx: RequestContext, State(_): State<Hits>, _: NoArgs| async move {
                Ok(GetPromptResult::new(vec![]))
            },
        ))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("prompt \"p\""), "{e}");
}

#[tokio::test]
async fn unexpected_errors_are_generic_and_explicit_messages_reach_the_model() {
    let c = in_process::client(server(Hits::default()));
    for name in ["io_fails", "anyhow_fails"] {
        let r = tool(&c, name, json!({})).await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, "Internal error", "{name}: {r}");
    }
    let r = tool(&c, "says_why", json!({})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "the quota is used up; try tomorrow"
    );
    let r = c
        .request("resources/read", json!({"uri": "app://broken"}))
        .await
        .unwrap();
    assert_eq!(r.error().unwrap().code, -32603);
    assert_eq!(r.message["error"]["message"], "Internal error");
    assert!(
        !r.message.to_string().contains("nonexistent"),
        "{}",
        r.message
    );
    let r = c
        .request("prompts/get", json!({"name": "refuses"}))
        .await
        .unwrap();
    assert_eq!(r.error().unwrap().code, -32603);
    assert_eq!(
        r.message["error"]["message"],
        "prompts are closed for maintenance"
    );
    let r = c
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": "boom"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        r.error().unwrap().code,
        -32602,
        "protocol errors stay expressible"
    );
}

#[tokio::test]
async fn typed_variables_and_arguments_are_declared_and_checked() {
    let c = in_process::client(server(Hits::default()));
    // A page that is not a number names no resource.
    let r = c
        .request("resources/read", json!({"uri": "books://dune/pages/x"}))
        .await
        .unwrap();
    assert_eq!(r.error().unwrap().code, -32602);
    assert_eq!(r.message["error"]["data"]["uri"], "books://dune/pages/x");
    // The prompt's arguments come from its struct.
    let r = c.request("prompts/list", Value::Null).await.unwrap();
    let greet = r.result().unwrap()["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "greet")
        .unwrap()
        .clone();
    assert_eq!(
        greet["arguments"],
        json!([
            {"name": "excitement", "description": "How many exclamation marks.", "required": false},
            {"name": "name", "description": "Who to greet.", "required": true}
        ])
    );
    let r = c
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada", "excitement": "lots"}}),
        )
        .await
        .unwrap();
    assert_eq!(r.error().unwrap().code, -32602);
    // Annotations set with the builder methods.
    let r = c.request("tools/list", Value::Null).await.unwrap();
    let hit = r.result().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "hit")
        .unwrap()
        .clone();
    assert_eq!(
        hit["annotations"],
        json!({"readOnlyHint": false, "idempotentHint": false, "openWorldHint": false})
    );
}

#[tokio::test]
async fn a_typed_form_is_asked_for_and_read_back() {
    let c = in_process::client(server(Hits::default()));
    let caps = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    let r = tool(&c, "preferences", caps.clone()).await;
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    let ask = &result["inputRequests"]["prefs"];
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(
        ask["params"]["requestedSchema"],
        json!({
            "type": "object",
            "properties": {
                "colour": {"type": "string", "enum": ["red", "blue"], "description": "Your favourite colour."},
                "newsletter": {"type": "boolean", "description": "Send a newsletter?"}
            },
            "required": ["colour", "newsletter"]
        })
    );
    let mut retry = caps.clone();
    retry["inputResponses"] =
        json!({"prefs": {"action": "accept", "content": {"colour": "blue", "newsletter": true}}});
    if let Some(state) = result.get("requestState") {
        retry["requestState"] = state.clone();
    }
    let r = tool(&c, "preferences", retry).await;
    assert_eq!(r["result"]["content"][0]["text"], "blue true", "{r}");
    // The same round answered by the client's callback.
    let answering = c
        .clone()
        .capabilities(json!({"elicitation": {"form": {}}}))
        .on_input(|key, _request| {
            (key == "prefs").then(|| Answer::accept(&json!({"colour": "red", "newsletter": false})))
        });
    let out: String = answering.call_tool("preferences").send().await.unwrap();
    assert_eq!(out, "red false");
    // A type the form schema cannot express is an internal error, not a bad request.
    let r = tool(&c, "bad_form", caps).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
}

//! The in-process test client (`stateless_mcp::testing`) itself: it builds requests a
//! 2026-07-28 server accepts (`_meta`, mirrored headers including `Mcp-Param-*`), follows
//! every page, tells protocol errors from tool failures, answers `input_required` rounds,
//! relays progress, presents a principal, and streams listen notifications. Every message
//! it receives is checked against the schema (`support::in_process`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stateless_mcp::protocol::{
    CompleteRequest, CompleteResult, CompletionReference, CreateMessageParams, GetPromptResult,
    InputRequest, PromptMessage, ResourceContents, SamplingMessage,
};
use stateless_mcp::testing::{Answer, TestError};
use stateless_mcp::{
    HandlerError, InputRequired, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef,
    Server, ToolDef,
};

use stateless_mcp::handler::Principal;

use crate::support::in_process;

#[derive(Serialize, Deserialize, JsonSchema)]
struct NoArgs {}

fn text_tool(name: String) -> ToolDef {
    ToolDef::new(name.clone())
        .description("answers its name")
        .handler(move |_ctx: RequestContext, _: NoArgs| {
            let name = name.clone();
            async move { Ok::<_, HandlerError>(name) }
        })
}

#[tokio::test]
async fn every_list_is_followed_to_its_last_page() {
    let mut b = Server::builder().page_size(2);
    for i in 0..5 {
        b = b
            .tool(text_tool(format!("tool_{i}")))
            .resource(
                ResourceDef::new(format!("app://r{i}"), format!("r{i}")).handler(
                    |_ctx, uri: String| async move { Ok(ResourceContents::text(uri, "")) },
                ),
            )
            .resource_template(
                ResourceTemplateDef::new(format!("t{i}://{{x}}"), format!("t{i}")).handler(
                    |_ctx, uri: String, _v: stateless_mcp::handler::TemplateVars| async move {
                        Ok(ResourceContents::text(uri, ""))
                    },
                ),
            )
            .prompt(PromptDef::new(format!("p{i}")).handler(
                |_ctx, _a: stateless_mcp::handler::PromptArguments| async {
                    Ok(GetPromptResult::new(vec![]))
                },
            ));
    }
    let c = in_process::client(b.build().unwrap());
    let names = |v: Vec<String>| v.join(",");
    let tools = c.list_tools().await.unwrap();
    assert_eq!(
        names(tools.into_iter().map(|t| t.name).collect()),
        "tool_0,tool_1,tool_2,tool_3,tool_4"
    );
    let resources = c.list_resources().await.unwrap();
    assert_eq!(
        names(resources.into_iter().map(|r| r.uri).collect()),
        "app://r0,app://r1,app://r2,app://r3,app://r4"
    );
    let templates = c.list_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 5);
    assert_eq!(templates[4].uri_template, "t4://{x}");
    let prompts = c.list_prompts().await.unwrap();
    assert_eq!(
        names(prompts.into_iter().map(|p| p.name).collect()),
        "p0,p1,p2,p3,p4"
    );
    assert_eq!(c.list_pages("tools/list").await.unwrap().len(), 3);
    let discover = c.discover().await.unwrap();
    assert_eq!(discover.supported_versions, ["2026-07-28"]);
}

#[tokio::test]
async fn mirrored_tool_parameters_are_sent_as_the_transport_would() {
    // A tool whose `region` and `dry_run` arguments are mirrored into Mcp-Param-* headers:
    // the server refuses (-32020) a request whose headers do not carry them.
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "dry_run": {"type": "boolean", "x-mcp-header": "DryRun"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "note": {"type": "string"}
    }});
    let server = Server::builder()
        .tool(
            ToolDef::new("deploy")
                .input_schema(schema.as_object().unwrap().clone())
                .raw_handler(|_ctx: RequestContext, args: Value| async move {
                    Ok::<_, HandlerError>(format!(
                        "{} {} {}",
                        args["region"], args["dry_run"], args["count"]
                    ))
                }),
        )
        .build()
        .unwrap();
    let c = in_process::client(server);
    let out: String = c
        .call_tool("deploy")
        .arguments(&json!({"region": "eu-west-1", "dry_run": true, "count": 3, "note": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(out, "\"eu-west-1\" true 3");
    let out: String = c
        .call_tool("deploy")
        .arguments(&json!({"note": "no mirrored argument at all"}))
        .send()
        .await
        .unwrap();
    assert_eq!(out, "null null null");
}

#[tokio::test]
async fn protocol_errors_tool_failures_and_wrong_shapes_are_told_apart() {
    let server = Server::builder()
        .tool(
            ToolDef::new("fails").handler(|_ctx: RequestContext, _: NoArgs| async move {
                Err::<String, _>(HandlerError::new("out of coffee"))
            }),
        )
        .tool(text_tool("word".into()))
        .build()
        .unwrap();
    let c = in_process::client(server);
    let e = c.call_tool("missing").send::<String>().await.unwrap_err();
    let rpc = e.rpc().expect("a JSON-RPC error");
    assert_eq!((rpc.code, rpc.http_status), (-32602, 400), "{e}");
    let e = c.call_tool("fails").send::<String>().await.unwrap_err();
    assert!(matches!(e, TestError::Tool(_)), "{e}");
    assert_eq!(e.tool_text(), Some("out of coffee"));
    let r = c.call_tool("fails").result().await.unwrap();
    assert_eq!(r.is_error, Some(true), "result() returns the failed result");
    let e = c.call_tool("word").send::<u64>().await.unwrap_err();
    assert!(matches!(e, TestError::Unexpected(_)), "{e}");
    let e = c
        .call_tool("word")
        .arguments(&json!([1, 2]))
        .send::<String>()
        .await
        .unwrap_err();
    assert!(
        matches!(e, TestError::Unexpected(_)),
        "arguments must be an object: {e}"
    );
    let e = c
        .call_tool("word")
        .arguments_json(json!([1, 2]))
        .result()
        .await
        .unwrap_err();
    let rpc = e.rpc().expect("sent as it is; the server refuses it");
    assert_eq!(rpc.code, -32602);
    assert_eq!(rpc.message, "params.arguments must be an object");
    let word: String = c.call_tool("word").send().await.unwrap();
    assert_eq!(word, "word");
}

/// A tool that asks in three rounds: a form, then a sampled message, then the roots,
/// carrying what it learnt in its sealed state.
fn interviewer() -> Server {
    #[derive(Deserialize, JsonSchema)]
    struct Name {
        name: String,
    }
    let tool = ToolDef::new("interview").handler(|ctx: RequestContext, _: NoArgs| async move {
        let input = ctx.input();
        let mut known: Vec<String> = input.state().unwrap_or_default();
        if let Some(n) = input.accepted::<Name>("name") {
            known.push(n.name);
        }
        if let Some(s) = input.raw("model") {
            known.push(s["content"]["text"].as_str().unwrap_or("?").to_owned());
        }
        if let Some(r) = input.raw("roots") {
            known.push(r["roots"][0]["uri"].as_str().unwrap_or("?").to_owned());
        }
        let ask = match known.len() {
            0 => InputRequired::new().elicit::<Name>("name", "Your name?")?,
            1 => InputRequired::new().sample(
                "model",
                CreateMessageParams::new(vec![SamplingMessage::user_text("A colour?")], 10),
            ),
            2 => InputRequired::new().list_roots("roots"),
            _ => return Ok(known.join(" | ")),
        };
        Err(ask.state(&known).into())
    });
    Server::builder().tool(tool).build().unwrap()
}

#[tokio::test]
async fn input_rounds_are_answered_by_the_callback_with_the_state_carried_back() {
    let rounds = Arc::new(AtomicUsize::new(0));
    let seen = rounds.clone();
    let c = in_process::client(interviewer())
        .all_input_capabilities()
        .on_input(move |key, request| {
            seen.fetch_add(1, Ordering::SeqCst);
            Some(match (key, request) {
                ("name", InputRequest::Elicit(_)) => Answer::accept(&json!({"name": "Ada"})),
                ("model", InputRequest::CreateMessage(_)) => Answer::sampled("teal", "m"),
                ("roots", InputRequest::ListRoots(_)) => Answer::roots(["file:///work"]),
                _ => return None,
            })
        });
    let out: String = c.call_tool("interview").send().await.unwrap();
    assert_eq!(out, "Ada | teal | file:///work");
    assert_eq!(rounds.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_unanswered_round_is_returned_and_can_be_answered_by_hand() {
    let c = in_process::client(interviewer()).all_input_capabilities();
    let TestError::InputRequired(asked) = c.call_tool("interview").result().await.unwrap_err()
    else {
        panic!("expected input_required");
    };
    assert!(asked.input_requests.as_ref().unwrap().contains_key("name"));
    let state = asked.request_state.clone().expect("a sealed state");
    let next = c
        .call_tool("interview")
        .input_response("name", Answer::accept(&json!({"name": "Bo"})))
        .request_state(state.clone())
        .result()
        .await
        .unwrap_err();
    let TestError::InputRequired(asked) = next else {
        panic!("expected the second round, got {next}");
    };
    assert!(asked.input_requests.as_ref().unwrap().contains_key("model"));
    // A callback that answers nothing ends the call on the round it cannot answer.
    let refusing = c.clone().on_input(|_, _| None);
    let e = refusing.call_tool("interview").result().await.unwrap_err();
    assert!(matches!(e, TestError::InputRequired(_)), "{e}");
    // A tampered state is the server's -32602, not a round.
    let e = c
        .call_tool("interview")
        .input_response("name", Answer::accept(&json!({"name": "Bo"})))
        .request_state(format!("{state}x"))
        .result()
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(-32602), "{e}");
    // Without the capability the server may not ask: -32021.
    let bare = in_process::client(interviewer());
    let e = bare.call_tool("interview").result().await.unwrap_err();
    assert_eq!(e.code(), Some(-32021), "{e}");
}

#[tokio::test]
async fn progress_comes_before_the_response_when_asked_for() {
    let server = Server::builder()
        .tool(
            ToolDef::new("slow").handler(|ctx: RequestContext, _: NoArgs| async move {
                for i in 1..=3 {
                    ctx.progress(f64::from(i), Some(3.0), None).await;
                }
                Ok::<_, HandlerError>("done")
            }),
        )
        .build()
        .unwrap();
    let c = in_process::client(server);
    let r = c
        .call_tool("slow")
        .meta("progressToken", json!("p-1"))
        .response()
        .await
        .unwrap();
    assert_eq!(r.result().unwrap()["content"][0]["text"], "done");
    let progress: Vec<&Value> = r
        .notifications
        .iter()
        .map(|n| &n["params"]["progress"])
        .collect();
    assert_eq!(progress, [&json!(1.0), &json!(2.0), &json!(3.0)]);
    assert!(
        r.notifications
            .iter()
            .all(|n| n["params"]["progressToken"] == "p-1")
    );
    let quiet = c.call_tool("slow").response().await.unwrap();
    assert!(quiet.notifications.is_empty(), "no progress unless asked");
}

#[tokio::test]
async fn the_principal_and_client_info_reach_handlers() {
    let server = Server::builder()
        .tool(
            ToolDef::new("whoami").handler(|ctx: RequestContext, _: NoArgs| async move {
                let who = ctx.principal().and_then(|p| p.subject.clone());
                let info = ctx.client_info().map(|i| i.name.clone());
                Ok::<_, HandlerError>(format!("{who:?} via {info:?}"))
            }),
        )
        .build()
        .unwrap();
    let c = in_process::client(server).client_info("suite", "9.9.9");
    let anonymous: String = c.call_tool("whoami").send().await.unwrap();
    assert_eq!(anonymous, "None via Some(\"suite\")");
    let alice: String = c
        .clone()
        .principal(Principal::new("alice"))
        .call_tool("whoami")
        .send()
        .await
        .unwrap();
    assert_eq!(alice, "Some(\"alice\") via Some(\"suite\")");
}

#[tokio::test]
async fn prompts_and_completions_take_typed_and_context_arguments() {
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Trip {
        city: String,
        days: u32,
        by_train: Option<bool>,
    }
    let server = Server::builder()
        .prompt(
            PromptDef::new("trip").handler(|_ctx: RequestContext, t: Trip| async move {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                    format!("{} days in {} (train: {:?})", t.days, t.city, t.by_train),
                )]))
            }),
        )
        .completion(|_ctx, req: CompleteRequest| async move {
            let country = req
                .context
                .and_then(|c| c.arguments)
                .and_then(|a| a.get("country").cloned())
                .unwrap_or_default();
            Ok(CompleteResult::from_values(vec![format!(
                "{}{country}",
                req.argument.value
            )]))
        })
        .build()
        .unwrap();
    let c = in_process::client(server);
    let p = c
        .get_prompt("trip")
        .arguments(&Trip {
            city: "Porto".into(),
            days: 3,
            by_train: None,
        })
        .send()
        .await
        .unwrap();
    assert_eq!(
        p.messages[0].content.as_text(),
        Some("3 days in Porto (train: None)")
    );
    let p = c
        .get_prompt("trip")
        .argument("city", "Graz")
        .argument("days", "x")
        .send()
        .await
        .unwrap_err();
    assert_eq!(p.code(), Some(-32602), "days is not a number: {p}");
    let done = c
        .complete(
            CompletionReference::Prompt {
                name: "trip".into(),
            },
            "city",
            "Po",
        )
        .context("country", "PT")
        .send()
        .await
        .unwrap();
    assert_eq!(done.values, ["PoPT"]);
}

#[tokio::test]
async fn a_listen_stream_yields_what_was_asked_for_then_closes() {
    let server = Server::builder()
        .tool(text_tool("t".into()))
        .prompt(PromptDef::new("p").handler(
            |_ctx, _a: stateless_mcp::handler::PromptArguments| async {
                Ok(GetPromptResult::new(vec![]))
            },
        ))
        .build()
        .unwrap();
    let c = in_process::client(server.clone());
    let mut tools = c
        .listen()
        .tools()
        .timeout(Duration::from_secs(10))
        .open()
        .await
        .unwrap();
    assert_eq!(tools.acknowledged(), &json!({"toolsListChanged": true}));
    let mut prompts = c.listen().prompts().open().await.unwrap();
    server.notifier().prompts_list_changed().await.unwrap();
    server.notifier().tools_list_changed().await.unwrap();
    let n = tools
        .notification("notifications/tools/list_changed")
        .await
        .unwrap();
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        json!(tools.id())
    );
    prompts
        .notification("notifications/prompts/list_changed")
        .await
        .unwrap();
    tools
        .expect_silence(Duration::from_millis(200))
        .await
        .expect("the prompts change is not sent to a tools-only stream");
    assert_eq!(server.listen_streams(), 2);
    server.close_listen_streams();
    let closed = tools.closed().await.unwrap();
    assert_eq!(closed["resultType"], "complete");
    prompts.closed().await.unwrap();
    let e = tools.next().await.unwrap_err();
    assert!(
        matches!(e, TestError::Unexpected(_)),
        "the stream ended: {e}"
    );
}

#[tokio::test]
async fn a_silent_listen_stream_times_out() {
    let c = in_process::client(
        Server::builder()
            .tool(text_tool("t".into()))
            .build()
            .unwrap(),
    );
    let mut s = c.listen().tools().open().await.unwrap();
    let e = s.next_within(Duration::from_millis(50)).await.unwrap_err();
    assert_eq!(e, TestError::Timeout(Duration::from_millis(50)));
}

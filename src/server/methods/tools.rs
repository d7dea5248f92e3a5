//! `tools/call`: the tool by name, its arguments (an object), the `Mcp-Param-*` mirrors, the
//! input schema (failures are results with `isError: true`), then the handler, whose
//! `structuredContent` is checked against its `outputSchema`. A task-capable tool called by
//! a client that declared the Tasks extension runs as a task (`task_runner`); a
//! task-required one without it is `-32021`.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::Extensions;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::tasks::{declares_tasks, missing_tasks_extension};
use crate::Error;
use crate::handler::TaskSupport;
use crate::handler::context_meta::ContextMeta;
use crate::handler::input::Stop;
use crate::handler::registry::{RegisteredTool, Registry};
use crate::handler::{DirectCall, RequestContext, ToolError, ToolHandler};
use crate::protocol::methods::TOOLS_CALL;
use crate::protocol::{CallToolResult, ErrorObject, JsonObject, RequestId};
use crate::server::Server;
use crate::server::envelope::{ParamsView, shared, string_field};
use crate::server::legacy::Asker;
use crate::server::mirror::MirroredHeaders;
use crate::server::outcome::Outcome;
use crate::server::reply::Reply;
use crate::server::seal::PendingArguments;
use crate::server::task_runner::ToolCall;
use crate::tasks::TaskWork;

/// How many argument-validation failures a tool error lists.
const MAX_REPORTED_ARGUMENT_ERRORS: usize = 5;

/// The longest arguments text a tool with a flat schema reads straight into its type.
/// That read checks the text and then parses it: two passes where the `Value` way makes
/// one, about 3.3 instructions more per byte, against some 500 saved per call (callgrind,
/// echo: 40 bytes of arguments); longer arguments go through a `Value`.
const DIRECT_MAX_BYTES: usize = 128;

/// A tool with an `outputSchema` must return conforming `structuredContent`; a tool that
/// does not is a server bug, reported as an internal error (and logged).
fn check_output(schema: &jsonschema::Validator, result: &CallToolResult) -> Result<(), Error> {
    let Some(value) = &result.structured_content else {
        return Err(Error::internal(
            "tool declares an outputSchema but returned no structuredContent",
        ));
    };
    match schema.iter_errors(value).next() {
        None => Ok(()),
        Some(e) => Err(Error::internal(format!(
            "tool output does not match its outputSchema at {}: {e}",
            e.instance_path()
        ))),
    }
}

/// Runs a tool's handler once and checks its output.
async fn invoke(
    handler: Arc<dyn ToolHandler>,
    output: Option<Arc<jsonschema::Validator>>,
    ctx: RequestContext,
    arguments: Value,
) -> Result<CallToolResult, Stop> {
    checked(handler.call(ctx, arguments), output).await
}

/// A run of a tool's handler, its output checked.
async fn checked(
    run: BoxFuture<'static, Result<CallToolResult, ToolError>>,
    output: Option<Arc<jsonschema::Validator>>,
) -> Result<CallToolResult, Stop> {
    let result = match run.await {
        Ok(r) => r,
        Err(e) => e.into_outcome()?,
    };
    if let Some(schema) = output.filter(|_| !result.is_error()) {
        check_output(&schema, &result)?;
    }
    Ok(result)
}

/// What a call runs: the handler on arguments read as a `Value` (and checked against the
/// input schema), or a typed handler that reads them from their text.
enum Call {
    Value(Arc<dyn ToolHandler>, Value),
    Text(Arc<dyn DirectCall>, Bytes),
}

impl Call {
    /// Runs the handler once, its output checked.
    async fn run(
        self,
        ctx: RequestContext,
        output: Option<Arc<jsonschema::Validator>>,
    ) -> Result<CallToolResult, Stop> {
        match self {
            Call::Value(handler, arguments) => invoke(handler, output, ctx, arguments).await,
            Call::Text(direct, text) => checked(direct.call_text(ctx, &text), output).await,
        }
    }

    /// The same call again (a legacy client's next round).
    fn again(&self) -> Call {
        match self {
            Call::Value(handler, arguments) => Call::Value(handler.clone(), arguments.clone()),
            Call::Text(direct, text) => Call::Text(direct.clone(), text.clone()),
        }
    }
}

impl Server {
    #[allow(clippy::too_many_arguments)]
    pub(in crate::server) fn call_tool(
        &self,
        reg: &Registry,
        body: &Bytes,
        id: &RequestId,
        meta: ContextMeta,
        view: &ParamsView<'_>,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
        asker: Option<Asker>,
    ) -> Result<Outcome, ErrorObject> {
        let name = string_field(view.name, "name")?;
        let tool = reg.tool(&name).ok_or_else(|| {
            ErrorObject::invalid_params_with(
                format!("Unknown tool: {name}"),
                json!({ "name": name }),
            )
        })?;
        let call = match self.direct_call(tool, body, view) {
            Some(call) => call,
            None => match self.checked_arguments(tool, &name, id, view, mirror)? {
                Ok(arguments) => Call::Value(tool.handler.clone(), arguments),
                Err(invalid) => return Ok(invalid),
            },
        };
        let raw_arguments = view.arguments.map(|r| shared(body, r.get()));
        let retry = self.retry_input(
            TOOLS_CALL,
            shared(body, &name),
            PendingArguments::Raw(raw_arguments),
            view,
            &extensions,
        )?;
        let call = match call {
            Call::Value(_, arguments)
                if tool.task_support != TaskSupport::Forbidden
                    && asker.is_none()
                    && declares_tasks(meta.client_capabilities()) =>
            {
                let work = TaskWork::new(name.into_owned(), arguments.clone());
                let call = tool_call(tool, arguments);
                let meta = meta.into_owned();
                return Ok(self.call_as_task(id.clone(), meta, extensions, retry, work, call));
            }
            call => call,
        };
        if tool.task_support == TaskSupport::Required {
            return Err(missing_tasks_extension());
        }
        let output = tool.output_validator.clone();
        let (id, retry) = (id.clone(), Some(retry));
        Ok(match asker {
            None => self.run(id, meta, extensions, retry, move |ctx| {
                call.run(ctx, output)
            }),
            // A legacy client's call runs again, here, with each round of answers.
            Some(asker) => self.run_with(id, meta, extensions, retry, true, move |ctx| {
                asker.rounds(ctx, move |ctx| call.again().run(ctx, output.clone()))
            }),
        })
    }

    /// The call of a typed tool with a flat input schema whose arguments (short enough)
    /// the schema accepts for sure: read from their text, no `Value` (a flat schema has no
    /// `Mcp-Param-*` headers, and such a tool never runs as a task). `None`: the `Value`
    /// way decides.
    fn direct_call(
        &self,
        tool: &RegisteredTool,
        body: &Bytes,
        view: &ParamsView<'_>,
    ) -> Option<Call> {
        let (direct, flat) = tool.direct.as_ref()?;
        // `null` and no arguments mean `{}`, as in `checked_arguments`.
        let sent = view.arguments.map(RawValue::get).filter(|t| *t != "null");
        let text = sent.unwrap_or("{}");
        if text.len() > DIRECT_MAX_BYTES || !flat.accepts(text) {
            return None;
        }
        let text = sent.map_or(Bytes::from_static(b"{}"), |t| shared(body, t));
        Some(Call::Text(direct.clone(), text))
    }

    /// The arguments read as a `Value` (`-32602` when not an object), their `Mcp-Param-*`
    /// mirrors checked, then validated: `Err` is the `isError` result naming what is wrong.
    fn checked_arguments(
        &self,
        tool: &RegisteredTool,
        name: &str,
        id: &RequestId,
        view: &ParamsView<'_>,
        mirror: Option<&MirroredHeaders>,
    ) -> Result<Result<Value, Outcome>, ErrorObject> {
        let arguments = match view.arguments {
            None => Value::Object(JsonObject::new()),
            Some(raw) => match serde_json::from_str::<Value>(raw.get()) {
                Ok(Value::Null) => Value::Object(JsonObject::new()),
                Ok(v @ Value::Object(_)) => v,
                _ => {
                    return Err(ErrorObject::invalid_params(
                        "params.arguments must be an object",
                    ));
                }
            },
        };
        if let Some(m) = mirror {
            m.check_params(&tool.header_params, &arguments)?;
        }
        // Valid arguments (the common case) are checked without collecting errors.
        if tool.validator.is_valid(&arguments) {
            return Ok(Ok(arguments));
        }
        let problems: Vec<String> = tool
            .validator
            .iter_errors(&arguments)
            .take(MAX_REPORTED_ARGUMENT_ERRORS)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        let mut result = CallToolResult::error(format!(
            "Invalid arguments for tool {name}: {}",
            problems.join("; ")
        ));
        result.meta = self.inner.result_meta.clone();
        Ok(Err(Outcome::Ready(Reply::result(id, &result))))
    }

    /// The handler of the tool `name` bound to `arguments`, for resuming a task.
    pub(in crate::server) fn tool_call(&self, name: &str, arguments: Value) -> Option<ToolCall> {
        self.inner
            .catalog
            .load()
            .registry
            .tool(name)
            .map(|tool| tool_call(tool, arguments))
    }
}

/// A tool's handler bound to its arguments, its `structuredContent` checked against its
/// `outputSchema`: what runs inline and as a task alike.
fn tool_call(tool: &RegisteredTool, arguments: Value) -> ToolCall {
    let handler = tool.handler.clone();
    let output = tool.output_validator.clone();
    Box::new(move |ctx| Box::pin(invoke(handler, output, ctx, arguments)))
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::Extensions;
    use schemars::JsonSchema;
    use serde::{Deserialize, Deserializer};

    use super::super::super::test_support::{answer, request};
    use crate::handler::{RequestContext, ToolDef, ToolError};
    use crate::server::{Outcome, Server};

    /// Reads like a `String` but refuses "refused": a schema-valid argument the type does
    /// not take.
    fn picky<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        let s = String::deserialize(d)?;
        if s == "refused" {
            return Err(serde::de::Error::custom("not this one"));
        }
        Ok(s)
    }

    #[derive(Deserialize, JsonSchema)]
    struct Args {
        #[serde(deserialize_with = "picky")]
        text: String,
        times: Option<u32>,
    }

    fn tool() -> ToolDef {
        ToolDef::new("say").handler(|_ctx: RequestContext, a: Args| async move {
            Ok::<_, ToolError>(a.text.repeat(a.times.unwrap_or(1) as usize))
        })
    }

    /// Whether the server's `say` tool reads its arguments from their text.
    fn reads_text(server: &Server) -> bool {
        let now = server.inner.catalog.load();
        now.registry.tool("say").unwrap().direct.is_some()
    }

    /// The same tool twice: read straight from the text, and (its schema set again by hand,
    /// which turns that off) through a `Value`.
    fn servers() -> [Server; 2] {
        let schema = tool().definition().input_schema.clone();
        let direct = Server::builder().tool(tool()).build().unwrap();
        let by_value = Server::builder()
            .tool(tool().input_schema(schema))
            .build()
            .unwrap();
        assert!(reads_text(&direct));
        assert!(!reads_text(&by_value));
        [direct, by_value]
    }

    async fn reply(server: &Server, params: &str) -> serde_json::Value {
        let body = Bytes::from(request("tools/call", params));
        let outcome = server.handle(&body, None, Extensions::new());
        if let Outcome::Ready(r) = &outcome {
            return serde_json::from_slice(&r.body).unwrap();
        }
        answer(outcome).await
    }

    #[tokio::test]
    async fn arguments_read_from_their_text_answer_as_through_a_value() {
        let [direct, by_value] = servers();
        for params in [
            r#""name":"say","arguments":{"text":"hi"}"#,
            r#""name":"say","arguments":{"text":"hi","times":3}"#,
            r#""name":"say","arguments":{"text":"h\u00e9","times":null,"extra":[1,{"a":2}]}"#,
            // Schema-valid, refused by the type: the same "Invalid arguments" message.
            r#""name":"say","arguments":{"text":"refused"}"#,
            // Sent twice: left to the `Value` path (which keeps the last one).
            r#""name":"say","arguments":{"text":"a","text":"b"}"#,
            // Schema-invalid.
            r#""name":"say","arguments":{"text":1}"#,
            r#""name":"say","arguments":{"times":1}"#,
            r#""name":"say","arguments":{"text":"a","times":-1}"#,
            r#""name":"say","arguments":{"text":"a","times":1.0}"#,
            r#""name":"say","arguments":{}"#,
            r#""name":"say","arguments":null"#,
            r#""name":"say""#,
            // Not an object, or not JSON a `Value` reads.
            r#""name":"say","arguments":[1]"#,
            r#""name":"say","arguments":{"text":"a","times":1e400}"#,
        ] {
            let fast = reply(&direct, params).await;
            let slow = reply(&by_value, params).await;
            assert_eq!(fast, slow, "{params}");
        }
        // Longer than what is read straight: the `Value` way for both.
        let long = format!(
            r#""name":"say","arguments":{{"text":"{}"}}"#,
            "x".repeat(200)
        );
        assert_eq!(reply(&direct, &long).await, reply(&by_value, &long).await);
        let ok = reply(
            &direct,
            r#""name":"say","arguments":{"text":"hi","times":2}"#,
        )
        .await;
        assert_eq!(ok["result"]["content"][0]["text"], "hihi");
        let refused = reply(&direct, r#""name":"say","arguments":{"text":"refused"}"#).await;
        assert_eq!(refused["result"]["isError"], true);
        assert!(
            refused["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("Invalid arguments: not this one")
        );
    }

    #[test]
    fn layered_task_capable_and_hand_written_schemas_go_through_a_value() {
        let registry = |def: ToolDef| reads_text(&Server::builder().tool(def).build().unwrap());
        assert!(registry(tool()));
        assert!(!registry(tool().timeout(std::time::Duration::from_secs(5))));
        assert!(!registry(
            tool().task_support(crate::handler::TaskSupport::Optional)
        ));
        let raw = ToolDef::new("say").raw_handler(
            |_ctx: RequestContext, _a: serde_json::Value| async move { Ok::<_, ToolError>("x") },
        );
        assert!(!registry(raw));
    }
}

//! `tools/call`: the tool by name, its arguments (an object), the `Mcp-Param-*` mirrors, the
//! input schema (failures are results with `isError: true`), then the handler, whose
//! `structuredContent` is checked against its `outputSchema`. Small arguments a typed tool's
//! plain input schema shows valid on their JSON text go from that text straight to the
//! handler's type ([`Direct`]); all others are read as a `Value` and checked by the compiled
//! schema, to the same answers. A task-capable tool called by
//! a client that declared the Tasks extension runs as a task (handed to the server's
//! [`TaskFamily`](crate::server::family::TaskFamily)); a task-required one without it is
//! `-32021`.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::Call;
use crate::Error;
use crate::handler::TaskSupport;
use crate::handler::input::Stop;
use crate::handler::registry::{Direct, RegisteredTool, Registry};
use crate::handler::{DirectCall, RequestContext, ToolHandler, ToolResponse};
use crate::protocol::methods::TOOLS_CALL;
use crate::protocol::{CallToolResult, ErrorObject, JsonObject, RequestId};
use crate::server::Server;
use crate::server::ask::Invoke;
use crate::server::envelope::{ParamsView, shared, string_field};
use crate::server::family::{TaskCall, ToolCall, declares_tasks, missing_tasks_extension};
use crate::server::idempotency::Guard;
use crate::server::mirror::MirroredHeaders;
use crate::server::mrtr::Retry;
use crate::server::outcome::Outcome;
use crate::server::reply::Reply;
use crate::server::scopes::principal_digest;
use crate::server::seal::PendingArguments;

/// The longest arguments text read straight into a typed tool's arguments ([`Direct`]).
/// That way reads the text twice (the plain check, then the type) where the general way
/// reads it once (into a `Value`, then moved into the type), so it saves the `Value`'s fixed
/// cost (about 600 instructions) but pays about 2.8 instructions per byte more: it wins on
/// the small arguments most calls have, and breaks even at about 250 bytes (measured: the
/// same instructions at 241 bytes; a 100 KB argument cost 23 % more; callgrind,
/// `benches/load/callgrind.sh`, see `docs/benchmarks.md`).
const DIRECT_MAX_BYTES: usize = 256;

/// How many argument-validation failures a tool error lists.
const MAX_REPORTED_ARGUMENT_ERRORS: usize = 5;

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
async fn call_handler(
    handler: Arc<dyn ToolHandler>,
    output: Option<Arc<jsonschema::Validator>>,
    ctx: RequestContext,
    arguments: Value,
) -> Result<CallToolResult, Stop> {
    checked(handler.call(ctx, arguments), output).await
}

/// A handler's run, its `structuredContent` checked against `output`.
async fn checked(
    run: BoxFuture<'static, ToolResponse>,
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

pub(in crate::server) fn call_tool(
    call: Call<'_>,
    reg: &Registry,
    body: &Bytes,
    view: &ParamsView<'_>,
    mirror: Option<&MirroredHeaders>,
) -> Result<Outcome, ErrorObject> {
    let server = call.server;
    let name = string_field(view.name, "name")?;
    let tool = reg.tool(&name).ok_or_else(|| {
        ErrorObject::invalid_params_with(format!("Unknown tool: {name}"), json!({ "name": name }))
    })?;
    if let (Some(direct), Some(raw)) = (&tool.direct, view.arguments) {
        if raw.get().len() <= DIRECT_MAX_BYTES && direct.schema.admits(raw.get()) {
            return call_direct(call, tool, direct, body, view, &name, raw.get());
        }
    }
    let arguments = arguments_of(view)?;
    // A tool that honours idempotency keys, called with one: the call runs once per key
    // (the key names the request: a retry with arguments that fail validation is a
    // conflict too, as the draft has it).
    let guard = if tool.idempotency_keys {
        let principal = principal_digest(&call.extensions);
        server.idempotency().guard(
            &call.extensions,
            principal.as_deref(),
            &call.meta,
            &name,
            &arguments,
        )?
    } else {
        None
    };
    let arguments = match checked_arguments(server, tool, &name, call.id, arguments, mirror)? {
        Ok(arguments) => arguments,
        Err(invalid) => return Ok(guarded(guard, call.id, invalid)),
    };
    let raw_arguments = view.arguments.map(|r| shared(body, r.get()));
    let retry = retry_of(&call, body, &name, view, raw_arguments)?;
    if tool.task_support != TaskSupport::Forbidden {
        if call.ask.is_sealed() && declares_tasks(call.meta.client_capabilities()) {
            let task = TaskCall {
                id: call.id.clone(),
                meta: call.meta.into_owned(),
                extensions: call.extensions,
                tool: name.into_owned(),
                arguments: arguments.clone(),
                call: tool_call(tool, arguments),
                retry,
            };
            let outcome = server.tasks().call_as_task(server, task);
            return Ok(guarded(guard, call.id, outcome));
        }
        if tool.task_support == TaskSupport::Required {
            return Err(missing_tasks_extension());
        }
    }
    let invoke = Invoke {
        args: (
            tool.handler.clone(),
            tool.output_validator.clone(),
            arguments,
        ),
        run: |ctx, (handler, output, arguments)| call_handler(handler, output, ctx, arguments),
    };
    let id = call.id;
    Ok(guarded(guard, id, call.run(retry, invoke)))
}

/// A call whose arguments the tool's plain schema showed valid on their text: they go from
/// that text straight to the handler's type (see [`Direct`]).
fn call_direct(
    call: Call<'_>,
    tool: &RegisteredTool,
    direct: &Direct,
    body: &Bytes,
    view: &ParamsView<'_>,
    name: &str,
    raw: &str,
) -> Result<Outcome, ErrorObject> {
    let arguments = shared(body, raw);
    let retry = retry_of(&call, body, name, view, Some(arguments.clone()))?;
    let invoke = Invoke {
        args: (
            direct.call.clone(),
            tool.output_validator.clone(),
            arguments,
        ),
        run: |ctx, (direct, output, arguments): (Arc<dyn DirectCall>, _, Bytes)| {
            checked(direct.call_text(ctx, &arguments), output)
        },
    };
    Ok(call.run(retry, invoke))
}

/// What the call brought back of an earlier `input_required` round of tool `name`, bound
/// to `arguments` (their raw text, as sent) and checked.
fn retry_of(
    call: &Call<'_>,
    body: &Bytes,
    name: &str,
    view: &ParamsView<'_>,
    arguments: Option<Bytes>,
) -> Result<Retry, ErrorObject> {
    call.server.sealer().retry_input(
        TOOLS_CALL,
        shared(body, name),
        PendingArguments::Raw(arguments),
        view,
        &call.extensions,
    )
}

/// `outcome`, run under `guard` when the call has one.
fn guarded(guard: Option<Guard>, id: &RequestId, outcome: Outcome) -> Outcome {
    match guard {
        Some(guard) => guard.wrap(id.clone(), outcome),
        None => outcome,
    }
}

/// The arguments read as a `Value` (absent or `null`: an empty object; `-32602` when not
/// an object).
fn arguments_of(view: &ParamsView<'_>) -> Result<Value, ErrorObject> {
    match view.arguments {
        None => Ok(Value::Object(JsonObject::new())),
        Some(raw) => match serde_json::from_str::<Value>(raw.get()) {
            Ok(Value::Null) => Ok(Value::Object(JsonObject::new())),
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(ErrorObject::invalid_params(
                "params.arguments must be an object",
            )),
        },
    }
}

/// The arguments' `Mcp-Param-*` mirrors checked, then the arguments validated: `Err` is
/// the `isError` result naming what is wrong.
fn checked_arguments(
    server: &Server,
    tool: &RegisteredTool,
    name: &str,
    id: &RequestId,
    arguments: Value,
    mirror: Option<&MirroredHeaders>,
) -> Result<Result<Value, Outcome>, ErrorObject> {
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
    result.meta = server.result_meta().clone();
    Ok(Err(Outcome::Ready(Reply::result(id, &result))))
}

/// The handler of the tool `name` bound to `arguments`, for resuming a task.
pub(crate) fn tool_call_named(server: &Server, name: &str, arguments: Value) -> Option<ToolCall> {
    server
        .serving()
        .load()
        .registry
        .tool(name)
        .map(|tool| tool_call(tool, arguments))
}

/// A tool's handler bound to its arguments, its `structuredContent` checked against its
/// `outputSchema`: what runs inline and as a task alike.
fn tool_call(tool: &RegisteredTool, arguments: Value) -> ToolCall {
    let handler = tool.handler.clone();
    let output = tool.output_validator.clone();
    Box::new(move |ctx| Box::pin(call_handler(handler, output, ctx, arguments)))
}

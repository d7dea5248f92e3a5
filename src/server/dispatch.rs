//! The validation ladder and method dispatch.
//!
//! Order (see DESIGN §3): parse (`-32700`) → one JSON-RPC object (`-32600`) → notification
//! accepted → `_meta` (`-32602`) → `MCP-Protocol-Version` mirror (`-32020`) → version
//! supported (`-32022`) → `Mcp-Method`/`Mcp-Name` mirrors (`-32020`) → method known and its
//! capability advertised (`-32601`) → params (`-32602`) → `Mcp-Param-*` mirrors (`-32020`) →
//! run. Every error echoes the request id when it could be read.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use bytes::Bytes;
use futures_util::FutureExt as _;
use http::Extensions;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Server;
use super::envelope::{self, Params, ParamsView};
use super::listen::{self, Honoured};
use super::mirror::MirroredHeaders;
use super::outcome::{Outcome, Reply, Running};
use super::seal::{PendingArguments, PendingBinding, SingleUse};
use crate::Error;
use crate::handler::context::ContextParts;
use crate::handler::input::{Stop, parse_responses};
use crate::handler::{Input, InputRequired, Principal, PromptDef, RequestContext};
use crate::protocol::methods::{self, *};
use crate::protocol::strict::json_str;
use crate::protocol::{
    CallToolResult, ClientCapabilities, CompleteRequest, CompletionReference, ErrorObject, IdField,
    InputRequiredResult, JsonObject, RequestId, RequestMeta, StampResult,
};

/// What a method that may answer `input_required` knows of its retry: the binding for
/// sealing or opening a state, the client's answers and state, and the claim a single-use
/// state needs before the handler runs.
struct Retry {
    binding: PendingBinding,
    input: Input,
    single_use: Option<SingleUse>,
}

/// How many argument-validation failures a tool error lists.
const MAX_REPORTED_ARGUMENT_ERRORS: usize = 5;

fn string_field<'a>(raw: Option<&'a RawValue>, field: &str) -> Result<Cow<'a, str>, ErrorObject> {
    let raw =
        raw.ok_or_else(|| ErrorObject::invalid_params(format!("Missing required params.{field}")))?;
    json_str(raw)
        .ok_or_else(|| ErrorObject::invalid_params(format!("params.{field} must be a string")))
}

fn optional_string<'a>(
    raw: Option<&'a RawValue>,
    field: &str,
) -> Result<Option<Cow<'a, str>>, ErrorObject> {
    raw.map(|r| string_field(Some(r), field)).transpose()
}

fn removed_method(method: &str, supported: &[&str]) -> ErrorObject {
    let mut e = ErrorObject::method_not_found(
        method,
        format!(
            "{method} was removed in protocol revision 2026-07-28; this server supports {}",
            supported.join(", ")
        ),
    );
    if let Some(Value::Object(data)) = &mut e.data {
        data.insert("supported".into(), json!(supported));
    }
    e
}

fn not_advertised(method: &str, capability: &str) -> ErrorObject {
    ErrorObject::method_not_found(
        method,
        format!("the server does not advertise the {capability} capability"),
    )
}

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

impl Server {
    /// Handles one incoming message: the whole validation ladder, then the method.
    ///
    /// `mirror` carries the values of the transport's mirrored headers (`None` for a
    /// transport without headers, e.g. stdio); `extensions` reach handlers through
    /// [`RequestContext::extensions`].
    pub fn handle(
        &self,
        body: &Bytes,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
    ) -> Outcome {
        let msg = match envelope::read(body) {
            Ok(m) => m,
            Err(e) => return Outcome::error(None, e),
        };
        let echo = msg.id.echo();
        if msg.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
            return Outcome::error(
                echo,
                ErrorObject::invalid_request("jsonrpc must be \"2.0\""),
            );
        }
        let Some(method_raw) = msg.method else {
            let why = if msg.result.is_some() || msg.error.is_some() {
                "The server does not accept JSON-RPC responses"
            } else {
                "Missing method"
            };
            return Outcome::error(echo, ErrorObject::invalid_request(why));
        };
        let Some(method) = json_str(method_raw) else {
            return Outcome::error(
                echo,
                ErrorObject::invalid_request("method must be a string"),
            );
        };
        let id = match msg.id {
            IdField::Absent => return Outcome::Accepted,
            IdField::Null => {
                return Outcome::error(
                    None,
                    ErrorObject::invalid_request("A request id must not be null"),
                );
            }
            IdField::Invalid => {
                return Outcome::error(
                    None,
                    ErrorObject::invalid_request("A request id must be a string or an integer"),
                );
            }
            IdField::Valid(id) => id,
        };
        match self.route(body, &id, &method, msg.params, mirror, extensions) {
            Ok(outcome) => outcome,
            Err(e) => Outcome::error(Some(id), e),
        }
    }

    fn route(
        &self,
        body: &Bytes,
        id: &RequestId,
        method: &str,
        params: Params<'_>,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        let inner = &self.inner;
        if methods::REMOVED.contains(&method) {
            return Err(removed_method(method, &inner.supported_versions));
        }
        let (view, meta) = params.read()?;
        crate::observability::on_request(id, method, &meta, view.name, view.uri, &extensions);
        if let Some(m) = mirror {
            m.check_protocol_version(&meta.protocol_version)?;
        }
        if !inner
            .supported_versions
            .contains(&meta.protocol_version.as_str())
        {
            return Err(ErrorObject::unsupported_protocol_version(
                &inner.supported_versions,
                &meta.protocol_version,
            ));
        }
        if let Some(m) = mirror {
            m.check_method(method)?;
            if let Some(field) = methods::name_field(method) {
                let raw = if field == "uri" { view.uri } else { view.name };
                let body = raw.and_then(json_str);
                m.check_name(body.as_deref())?;
            }
        }
        let reg = &inner.registry;
        let ready = |page: &RawValue| Ok(Outcome::Ready(Reply::encoded(id, page)));
        match method {
            DISCOVER => ready(&inner.discover),
            TOOLS_LIST => {
                self.gate(!reg.tools.is_empty(), method, "tools")?;
                ready(&inner.lists.tools.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            RESOURCES_LIST => {
                self.gate(reg.has_resources(), method, "resources")?;
                ready(&inner.lists.resources.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            RESOURCE_TEMPLATES_LIST => {
                self.gate(reg.has_resources(), method, "resources")?;
                ready(&inner.lists.templates.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            PROMPTS_LIST => {
                self.gate(!reg.prompts.is_empty(), method, "prompts")?;
                ready(&inner.lists.prompts.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            TOOLS_CALL => {
                self.gate(!reg.tools.is_empty(), method, "tools")?;
                self.call_tool(body, id, meta, &view, mirror, extensions)
            }
            RESOURCES_READ => {
                self.gate(reg.has_resources(), method, "resources")?;
                self.read_resource(id, meta, &view, extensions)
            }
            PROMPTS_GET => {
                self.gate(!reg.prompts.is_empty(), method, "prompts")?;
                self.get_prompt(id, meta, &view, extensions)
            }
            COMPLETION_COMPLETE => {
                self.gate(reg.completion.is_some(), method, "completions")?;
                self.complete(id, meta, body, extensions)
            }
            SUBSCRIPTIONS_LISTEN => {
                let honoured = Honoured {
                    tools: !reg.tools.is_empty(),
                    prompts: !reg.prompts.is_empty(),
                    resources: reg.has_resources(),
                };
                self.gate(
                    honoured.tools || honoured.prompts || honoured.resources,
                    method,
                    "listChanged or subscribe",
                )?;
                let filter = listen::filter(view.notifications, &honoured)?;
                Ok(
                    match inner.listeners.start(
                        id.clone(),
                        filter,
                        inner.notifier.subscribe(),
                        inner.server_info.clone(),
                    ) {
                        Ok(stream) => Outcome::Listen(stream),
                        Err(busy) => Outcome::Ready(busy),
                    },
                )
            }
            _ => Err(ErrorObject::method_not_found(method, "unknown method")),
        }
    }

    fn gate(&self, advertised: bool, method: &str, capability: &str) -> Result<(), ErrorObject> {
        if advertised {
            Ok(())
        } else {
            Err(not_advertised(method, capability))
        }
    }

    fn call_tool(
        &self,
        body: &Bytes,
        id: &RequestId,
        meta: RequestMeta,
        view: &ParamsView<'_>,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        let name = string_field(view.name, "name")?;
        let tool = self.inner.registry.tool(&name).ok_or_else(|| {
            ErrorObject::invalid_params_with(
                format!("Unknown tool: {name}"),
                json!({ "name": name }),
            )
        })?;
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
        let problems: Vec<String> = if tool.validator.is_valid(&arguments) {
            Vec::new()
        } else {
            tool.validator
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
                .collect()
        };
        if !problems.is_empty() {
            let mut result = CallToolResult::error(format!(
                "Invalid arguments for tool {name}: {}",
                problems.join("; ")
            ));
            result.meta = self.inner.result_meta.clone();
            return Ok(Outcome::Ready(Reply::result(id, &result)));
        }
        let raw_arguments = view.arguments.map(|r| body.slice_ref(r.get().as_bytes()));
        let retry = self.retry_input(
            TOOLS_CALL,
            &name,
            PendingArguments::Raw(raw_arguments),
            view,
            &extensions,
        )?;
        let handler = tool.handler.clone();
        let output = tool.output_validator.clone();
        Ok(self.run(
            id.clone(),
            meta,
            extensions,
            Some(retry),
            move |ctx| async move {
                let result = match handler.call(ctx, arguments).await {
                    Ok(r) => r,
                    Err(e) => e.into_outcome()?,
                };
                if let Some(schema) = output.filter(|_| !result.is_error()) {
                    check_output(&schema, &result)?;
                }
                Ok(result)
            },
        ))
    }

    fn read_resource(
        &self,
        id: &RequestId,
        meta: RequestMeta,
        view: &ParamsView<'_>,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        let uri = string_field(view.uri, "uri")?.into_owned();
        if !crate::handler::registry::has_scheme(&uri) {
            return Err(ErrorObject::invalid_params_with(
                "Invalid resource URI: it has no scheme",
                json!({ "uri": uri }),
            ));
        }
        let (handler, cache, vars) = self
            .inner
            .registry
            .resource_reader(&uri)
            .ok_or_else(|| ErrorObject::resource_not_found(&uri))?;
        let policy = cache.unwrap_or(self.inner.read_cache);
        let retry = self.retry_input(
            RESOURCES_READ,
            &uri,
            PendingArguments::Value(Value::Null),
            view,
            &extensions,
        )?;
        Ok(self.run(
            id.clone(),
            meta,
            extensions,
            Some(retry),
            move |ctx| async move {
                let mut result = handler.read(ctx, uri, vars).await.map_err(|e| e.0)?;
                result.cache.get_or_insert(policy);
                Ok(result)
            },
        ))
    }

    fn get_prompt(
        &self,
        id: &RequestId,
        meta: RequestMeta,
        view: &ParamsView<'_>,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        let name = string_field(view.name, "name")?;
        let prompt = self.inner.registry.prompt(&name).ok_or_else(|| {
            ErrorObject::invalid_params_with(
                format!("Unknown prompt: {name}"),
                json!({ "name": name }),
            )
        })?;
        let arguments = match view.arguments {
            Some(raw) => serde_json::from_str::<Option<BTreeMap<String, String>>>(raw.get())
                .map_err(|_| {
                    ErrorObject::invalid_params("params.arguments must map names to strings")
                })?
                .unwrap_or_default(),
            None => BTreeMap::new(),
        };
        let missing: Vec<&str> = PromptDef::required_arguments(&prompt.prompt)
            .filter(|a| !arguments.contains_key(*a))
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params_with(
                format!(
                    "Missing required argument(s) for prompt {name}: {}",
                    missing.join(", ")
                ),
                json!({ "missing": missing }),
            ));
        }
        let salient = serde_json::to_value(&arguments).unwrap_or_default();
        let retry = self.retry_input(
            PROMPTS_GET,
            &name,
            PendingArguments::Value(salient),
            view,
            &extensions,
        )?;
        let handler = prompt.handler.clone();
        Ok(self.run(
            id.clone(),
            meta,
            extensions,
            Some(retry),
            move |ctx| async move { handler.get(ctx, arguments).await.map_err(|e| e.0) },
        ))
    }

    fn complete(
        &self,
        id: &RequestId,
        meta: RequestMeta,
        body: &[u8],
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        // The only method that reads its params whole: read them again from the body.
        let params = envelope::parse_message(body)?.params;
        let raw = params.map(RawValue::get).unwrap_or("{}");
        let request: CompleteRequest = serde_json::from_str(raw)
            .map_err(|e| ErrorObject::invalid_params(format!("Invalid completion request: {e}")))?;
        let reg = &self.inner.registry;
        let known = match &request.reference {
            CompletionReference::Prompt { name } => reg.prompt(name).is_some(),
            CompletionReference::Resource { uri } => reg.knows_resource_reference(uri),
        };
        if !known {
            return Err(ErrorObject::invalid_params(
                "Invalid completion reference: nothing by that name",
            ));
        }
        let Some(handler) = reg.completion.clone() else {
            return Err(not_advertised(COMPLETION_COMPLETE, "completions"));
        };
        Ok(
            self.run(id.clone(), meta, extensions, None, move |ctx| async move {
                let mut result = handler.complete(ctx, request).await.map_err(Stop::Error)?;
                result.enforce_limit();
                Ok(result)
            }),
        )
    }

    /// Reads what a retry brings: `inputResponses` (structure checked) and `requestState`
    /// (opened with the key ring and checked against this request and caller). Both are
    /// `-32602` when invalid.
    fn retry_input(
        &self,
        method: &'static str,
        target: &str,
        arguments: PendingArguments,
        view: &ParamsView<'_>,
        extensions: &Extensions,
    ) -> Result<Retry, ErrorObject> {
        let binding = PendingBinding::new(
            method,
            target.to_owned(),
            arguments,
            extensions.get::<Principal>(),
        );
        let responses = parse_responses(view.input_responses)?;
        let mut single_use = None;
        let state = match view.request_state {
            None => None,
            Some(raw) => {
                let token = json_str(raw).ok_or_else(|| {
                    ErrorObject::invalid_params("Invalid requestState: it must be a string")
                })?;
                let opened = self
                    .inner
                    .state_keys
                    .open(&token, &binding.resolve())
                    .inspect_err(|e| {
                        let reason = e
                            .data
                            .as_ref()
                            .and_then(|d| d["reason"].as_str())
                            .and_then(super::seal::reason_label)
                            .unwrap_or("other");
                        crate::observability::metrics::record_request_state_rejected(reason);
                    })?;
                single_use = opened.single_use;
                Some(opened.state)
            }
        };
        Ok(Retry {
            binding,
            input: Input { responses, state },
            single_use,
        })
    }

    /// Runs a handler: its context, cancellation on drop, panic isolation, `serverInfo`
    /// stamping, sealing of `input_required` answers (for the methods that may give them,
    /// `mrtr` is `Some`) and encoding.
    fn run<T, F, Fut>(
        &self,
        id: RequestId,
        meta: RequestMeta,
        extensions: Extensions,
        mrtr: Option<Retry>,
        make: F,
    ) -> Outcome
    where
        T: Serialize + StampResult + Send + 'static,
        F: FnOnce(RequestContext) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Stop>> + Send + 'static,
    {
        // Only a request that asked for progress or log messages can have notifications.
        let (tx, events) = if meta.progress_token.is_some() || meta.log_level.is_some() {
            let (tx, rx) = mpsc::channel(self.inner.event_buffer);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let token = CancellationToken::new();
        let (binding, input, single_use) = match mrtr {
            Some(r) => (Some(r.binding), r.input, r.single_use),
            None => (None, Input::default(), None),
        };
        let ctx = RequestContext::new(ContextParts {
            id: id.clone(),
            method: binding.as_ref().map_or(COMPLETION_COMPLETE, |b| b.method),
            meta,
            extensions,
            cancellation: token.clone(),
            events: tx,
            input,
            notifier: self.inner.notifier.clone(),
        });
        // What sealing an `input_required` answer needs: the binding, and the client's
        // capabilities (read through a second handle on the context, not copied up front).
        let asking = binding.map(|b| (b, ctx.clone()));
        let server = self.clone();
        let reply = async move {
            let _cancel_on_drop = token.drop_guard();
            let method = ctx.method();
            if let Some(claim) = single_use {
                if let Err(reply) = server.claim(&id, method, &claim).await {
                    return reply;
                }
            }
            let outcome = AssertUnwindSafe(async move { make(ctx).await })
                .catch_unwind()
                .await;
            let inner = &server.inner;
            match outcome {
                Ok(Ok(mut result)) => {
                    result.meta_mut().server_info = Some(inner.server_info.clone());
                    Reply::result_sized(&id, &result, result.content_size_hint())
                }
                Ok(Err(Stop::Input(ask))) => match asking {
                    Some((b, asker)) => {
                        match server.input_required(ask, &b.resolve(), asker.client_capabilities())
                        {
                            Ok(result) => Reply::result(&id, &result),
                            Err(e) => server.failed(id, method, e),
                        }
                    }
                    None => server.failed(
                        id,
                        method,
                        Error::internal(format!("{method} cannot answer input_required")),
                    ),
                },
                Ok(Err(Stop::Error(e))) => server.failed(id, method, e),
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    tracing::error!(request_id = %id, method, panic = %what, "handler panicked");
                    Reply::error(Some(id), ErrorObject::internal_error("Internal error"))
                }
            }
        };
        Outcome::Running(Running {
            reply: Box::pin(reply),
            events,
        })
    }

    /// Claims a single-use state in the replay store: refused `-32602` (`replayed`) when it
    /// was used before, `-32603` when the store cannot answer (fail closed).
    async fn claim(&self, id: &RequestId, method: &str, claim: &SingleUse) -> Result<(), Reply> {
        match self.inner.replay.claim(&claim.id, claim.expires).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                crate::observability::metrics::record_request_state_rejected("replayed");
                Err(Reply::error(Some(id.clone()), super::seal::replayed()))
            }
            Err(e) => {
                tracing::error!(request_id = %id, method, error = %e, "single-use requestState could not be checked");
                Err(Reply::error(
                    Some(id.clone()),
                    ErrorObject::internal_error("Internal error: the replay store is unavailable"),
                ))
            }
        }
    }

    fn failed(&self, id: RequestId, method: &str, e: Error) -> Reply {
        if e.kind() == crate::ErrorKind::Internal {
            tracing::error!(request_id = %id, method, error = %e, "handler failed");
        }
        Reply::error(Some(id), e.to_wire())
    }

    /// Turns a handler's request for input into the result: refused with `-32021` when the
    /// client lacks a capability it needs, state sealed and bound to this request.
    fn input_required(
        &self,
        ask: InputRequired,
        binding: &super::seal::Binding,
        caps: &ClientCapabilities,
    ) -> Result<InputRequiredResult, Error> {
        if let Some(required) = ask.missing_capabilities(caps) {
            return Err(Error::missing_client_capability(&required));
        }
        let state = match ask.state {
            Some(Ok(value)) => Some(self.inner.state_keys.seal(
                binding,
                value,
                self.inner.state_ttl,
                ask.single_use,
            )?),
            Some(Err(e)) => {
                return Err(Error::internal(format!(
                    "requestState did not serialize: {e}"
                )));
            }
            None => None,
        };
        let requests = (!ask.requests.is_empty()).then_some(ask.requests);
        if requests.is_none() && state.is_none() {
            return Err(Error::internal(
                "a handler answered input_required with neither input requests nor state",
            ));
        }
        let mut result = InputRequiredResult::new(requests, state);
        result.meta.server_info = Some(self.inner.server_info.clone());
        Ok(result)
    }
}

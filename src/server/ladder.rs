//! The validation ladder and routing: [`Server::handle`] reads the envelope, checks each rung
//! in order and hands the request to its method family.
//!
//! Order (see DESIGN §3): parse (`-32700`) → one JSON-RPC object (`-32600`) → notification
//! accepted → removed method, or a Tasks method without task-capable tools (`-32601`) →
//! `_meta` (`-32602`) → `MCP-Protocol-Version`
//! mirror (`-32020`) → version supported (`-32022`) → `Mcp-Method`/`Mcp-Name` mirrors
//! (`-32020`) → method known and its capability advertised (`-32601`) → params (`-32602`) →
//! `Mcp-Param-*` mirrors (`-32020`, in `tools/call`) → run. Every error echoes the request id
//! when it could be read.
//!
//! The ladder is also where every request is observed: [`Server::handle`] for the requests
//! it dispatches, [`Server::observe`] for a wing's exchanges, [`Server::record_rejection`]
//! for what a transport refused before dispatch (the mechanics are in `observed`).

use std::borrow::Cow;
use std::future::Future;

use bytes::Bytes;
use http::Extensions;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::Server;
use super::ask::Ask;
use super::envelope::{self, Meta, Params, ParamsView, optional_string};
use super::listen;
use super::lists::Page;
use super::methods::Call;
use super::mirror::MirroredHeaders;
use super::observed::{self, Labels, Observed};
use super::outcome::Outcome;
use crate::handler::context_meta::ContextMeta;
use crate::observability::metrics::RequestOutcome;
use crate::observability::{RequestProbe, SpanMeta};
use crate::protocol::methods::{self, *};
use crate::protocol::strict::json_str;
use crate::protocol::{
    ErrorObject, IdField, RequestId, SKILLS_EXTENSION, SKILLS_GET, SKILLS_LIST, TASKS_CANCEL,
    TASKS_GET, TASKS_UPDATE,
};

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

/// The envelope's rungs: one JSON-RPC request object, its id, method and params (`Err`: the
/// answer to anything else, a notification accepted or the error).
fn request(body: &Bytes) -> Result<(RequestId, Cow<'_, str>, Params<'_>), Outcome> {
    let msg = envelope::read(body).map_err(|e| Outcome::error(None, e))?;
    let echo = msg.id.echo();
    if msg.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(Outcome::error(
            echo,
            ErrorObject::invalid_request("jsonrpc must be \"2.0\""),
        ));
    }
    let Some(method_raw) = msg.method else {
        let why = if msg.result.is_some() || msg.error.is_some() {
            "The server does not accept JSON-RPC responses"
        } else {
            "Missing method"
        };
        return Err(Outcome::error(echo, ErrorObject::invalid_request(why)));
    };
    let Some(method) = json_str(method_raw) else {
        return Err(Outcome::error(
            echo,
            ErrorObject::invalid_request("method must be a string"),
        ));
    };
    let id = match msg.id {
        IdField::Absent => return Err(Outcome::Accepted),
        IdField::Null => {
            return Err(Outcome::error(
                None,
                ErrorObject::invalid_request("A request id must not be null"),
            ));
        }
        IdField::Invalid => {
            return Err(Outcome::error(
                None,
                ErrorObject::invalid_request("A request id must be a string or an integer"),
            ));
        }
        IdField::Valid(id) => id,
    };
    Ok((id, method, msg.params))
}

impl Server {
    /// Handles one incoming message: the whole validation ladder, then the method, observed
    /// (request metrics and the `mcp.request` span, as for every transport).
    ///
    /// `mirror` carries the values of the transport's mirrored headers (`None` for a
    /// transport without headers, e.g. stdio); `extensions` reach handlers through
    /// [`RequestContext::extensions`](crate::RequestContext::extensions).
    pub fn handle(
        &self,
        body: &Bytes,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
    ) -> Outcome {
        self.handle_request(body, mirror, extensions).0
    }

    /// [`Server::handle`], and the id of the request when the ladder let it through to its
    /// method (a transport that tracks running requests by id, as stdio does, need not read
    /// the body again for it).
    pub(crate) fn handle_request(
        &self,
        body: &Bytes,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
    ) -> (Outcome, Option<RequestId>) {
        let mut probe = self.inner.observer.start_labelled(
            mirror.and_then(|m| m.method.value()),
            mirror.and_then(|m| m.name.value()),
        );
        let (outcome, id) = {
            let span = probe.span().clone();
            let _entered = span.enter();
            self.dispatch(body, mirror, extensions, &mut probe)
        };
        (outcome.observed(probe), id)
    }

    /// Observes one exchange that a wing answers (the 2025-11-25 era, over any transport) as
    /// [`Server::handle`] observes a request: the `mcp.request` span (entered while
    /// `exchange` runs; the method and id recorded for a body-labelled request, the rest by
    /// dispatch as on the 2026 path), the request metrics labelled from `labels`, and the
    /// outcome as [`Observed`] records it.
    ///
    /// `exchange` is boxed at once: held inline, it would sit in the returned future twice
    /// (before it runs and while it runs), and every move of the request's future on its way
    /// into hyper would copy both (about 8 KB for a legacy POST).
    pub(crate) fn observe<'a, O: Observed + 'a>(
        &'a self,
        labels: Labels<'a>,
        exchange: impl Future<Output = O> + 'a,
    ) -> impl Future<Output = O> + 'a {
        let exchange = Box::pin(exchange);
        async move {
            let probe = observed::start(&self.inner.observer, labels);
            let span = probe.span().clone();
            let out = tracing::Instrument::instrument(exchange, span).await;
            out.observed(probe)
        }
    }

    /// Records a request a transport refused before handing it to [`Server::handle`]
    /// (`status`: the HTTP status it answered), labelled from its mirrored headers.
    pub(crate) fn record_rejection(&self, mirror: &MirroredHeaders, status: u16) {
        observed::start(&self.inner.observer, Labels::Headers(mirror))
            .finish(RequestOutcome::Rejected(status));
    }

    /// The whole validation ladder, then the method (for [`Server::handle`], which observes
    /// it), and the request's id when the method ran. Without mirrored headers the request's
    /// metrics are labelled from its body here.
    pub(super) fn dispatch(
        &self,
        body: &Bytes,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
        probe: &mut RequestProbe,
    ) -> (Outcome, Option<RequestId>) {
        let (id, method, params) = match request(body) {
            Ok(request) => request,
            Err(answered) => return (answered, None),
        };
        if mirror.is_none() {
            probe.label(&self.inner.observer, &method, params.name());
        }
        match self.route(body, &id, &method, params, mirror, extensions) {
            Ok(outcome) => (outcome, Some(id)),
            Err(e) => (Outcome::error(Some(id), e), None),
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
        if methods::TASKS.contains(&method) && !inner.catalog.advertised().tasks {
            return Err(not_advertised(
                method,
                "io.modelcontextprotocol/tasks extension",
            ));
        }
        let (view, meta) = params.read()?;
        let version = meta.protocol_version();
        let span_meta = SpanMeta {
            version,
            client: meta.client_name(),
            traceparent: meta.traceparent(),
            tracestate: meta.tracestate(),
            session: None,
        };
        crate::observability::on_request(id, method, span_meta, view.name, view.uri, &extensions);
        if let Some(m) = mirror {
            m.check_protocol_version(version)?;
        }
        let Some(&version) = inner.supported_versions.iter().find(|v| **v == version) else {
            return Err(ErrorObject::unsupported_protocol_version(
                &inner.supported_versions,
                version,
            ));
        };
        if let Some(m) = mirror {
            m.check_method(method)?;
            if let Some(field) = methods::name_field(method) {
                let raw = match field {
                    "uri" => view.uri,
                    "taskId" => view.task_id,
                    _ => view.name,
                };
                let body = raw.and_then(json_str);
                m.check_name(body.as_deref())?;
            }
        }
        let meta = Meta::Wire(meta, version);
        self.dispatch_method(
            body,
            id,
            method,
            view,
            meta,
            mirror,
            extensions,
            &Ask::Sealed,
        )
    }

    /// Runs `method` for a request whose envelope, `_meta` and mirrored headers were
    /// checked: the ladder's last rungs, shared with legacy requests (whose `ask` puts input
    /// requests to their client over the request's stream).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dispatch_method(
        &self,
        body: &Bytes,
        id: &RequestId,
        method: &str,
        view: ParamsView<'_>,
        meta: Meta<'_>,
        mirror: Option<&MirroredHeaders>,
        extensions: Extensions,
        ask: &Ask,
    ) -> Result<Outcome, ErrorObject> {
        let inner = &self.inner;
        let now = inner.catalog.load();
        let (reg, lists, advertised) = (&now.registry, &now.lists, inner.catalog.advertised());
        let ready = |page: Page<'_>| Ok(Outcome::Ready(page.reply(id)));
        match method {
            DISCOVER => ready(Page::Encoded(&inner.discover)),
            TOOLS_LIST => {
                self.gate(advertised.tools, method, "tools")?;
                ready(lists.tools.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            RESOURCES_LIST => {
                self.gate(advertised.resources, method, "resources")?;
                ready(lists.resources.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            RESOURCE_TEMPLATES_LIST => {
                self.gate(advertised.resources, method, "resources")?;
                ready(lists.templates.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            PROMPTS_LIST => {
                self.gate(advertised.prompts, method, "prompts")?;
                ready(lists.prompts.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            SKILLS_LIST => {
                self.gate(advertised.skills, method, SKILLS_EXTENSION)?;
                ready(lists.skills.page_for(
                    optional_string(view.cursor, "cursor")?.as_deref(),
                    &extensions,
                )?)
            }
            SKILLS_GET => {
                self.gate(advertised.skills, method, SKILLS_EXTENSION)?;
                let cache = inner.catalog.list_cache();
                super::methods::skills::get_skill(self, reg, id, &view, cache)
            }
            TOOLS_CALL => {
                self.gate(advertised.tools, method, "tools")?;
                let call = self.call(id, meta.into_context(body), extensions, ask);
                super::methods::tools::call_tool(call, reg, body, &view, mirror)
            }
            RESOURCES_READ => {
                self.gate(advertised.resources, method, "resources")?;
                let call = self.call(id, meta.into_context(body), extensions, ask);
                super::methods::resources::read_resource(call, reg, &view)
            }
            PROMPTS_GET => {
                self.gate(advertised.prompts, method, "prompts")?;
                let call = self.call(id, meta.into_context(body), extensions, ask);
                super::methods::prompts::get_prompt(call, reg, &view)
            }
            COMPLETION_COMPLETE => {
                let handler = reg
                    .completion
                    .clone()
                    .ok_or_else(|| not_advertised(method, "completions"))?;
                super::methods::completion::complete(
                    self,
                    reg,
                    id,
                    meta.into_context(body),
                    body,
                    handler,
                    extensions,
                )
            }
            SUBSCRIPTIONS_LISTEN => {
                self.gate(
                    advertised.tools || advertised.prompts || advertised.resources,
                    method,
                    "listChanged or subscribe",
                )?;
                let filter = listen::filter(view.notifications, &advertised)?;
                Ok(
                    match inner.listeners.start(
                        id.clone(),
                        filter,
                        super::scopes::principal_digest(&extensions),
                        &inner.notifier,
                        inner.server_info.clone(),
                    ) {
                        Ok(stream) => Outcome::Listen(stream),
                        Err(busy) => Outcome::Ready(busy),
                    },
                )
            }
            TASKS_GET | TASKS_UPDATE | TASKS_CANCEL => {
                let meta = meta.into_owned();
                let request =
                    super::family::TaskRequest::read(id, method, meta, &view, extensions)?;
                Ok(inner.tasks.answer(self, request))
            }
            _ => Err(ErrorObject::method_not_found(method, "unknown method")),
        }
    }

    /// What a method family that runs a handler receives.
    fn call<'a>(
        &'a self,
        id: &'a RequestId,
        meta: ContextMeta,
        extensions: Extensions,
        ask: &'a Ask,
    ) -> Call<'a> {
        Call {
            server: self,
            id,
            meta,
            extensions,
            ask,
        }
    }

    fn gate(&self, advertised: bool, method: &str, capability: &str) -> Result<(), ErrorObject> {
        if advertised {
            Ok(())
        } else {
            Err(not_advertised(method, capability))
        }
    }
}

#[cfg(test)]
mod tests {
    use http::Extensions;
    use serde_json::Value;

    use super::super::test_support::{answer, code, mirror, request};
    use super::*;
    use crate::handler::{HandlerError, RequestContext, ToolDef};
    use crate::server::Mirrored;

    fn server() -> Server {
        Server::builder()
            .tool(
                ToolDef::new("echo")
                    .input_schema(
                        serde_json::from_str(r#"{"type":"object","properties":{"text":{"type":"string","x-mcp-header":"Text"}},"required":["text"]}"#)
                            .unwrap(),
                    )
                    .raw_handler(|_ctx: RequestContext, args: Value| async move {
                        Ok::<_, HandlerError>(args["text"].as_str().unwrap_or_default().to_owned())
                    }),
            )
            .build()
            .unwrap()
    }

    fn handle(server: &Server, body: &str, mirror: Option<&MirroredHeaders>) -> Outcome {
        server.handle(&Bytes::from(body.to_owned()), mirror, Extensions::new())
    }

    fn message(outcome: &Outcome) -> Value {
        match outcome {
            Outcome::Ready(r) => serde_json::from_slice(&r.to_bytes()).unwrap(),
            other => panic!("expected a ready reply, got {other:?}"),
        }
    }

    #[test]
    fn envelope_rungs_come_first() {
        let s = server();
        // Wrong jsonrpc and no method: the version is checked first.
        let o = handle(&s, r#"{"jsonrpc":"1.0","id":7}"#, None);
        assert_eq!(code(&o), -32600);
        assert_eq!(message(&o)["error"]["message"], "jsonrpc must be \"2.0\"");
        assert_eq!(message(&o)["id"], 7);
        // A notification is accepted before its params are looked at.
        let o = handle(
            &s,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":[]}"#,
            None,
        );
        assert!(matches!(o, Outcome::Accepted));
        // A null id is refused before the method is routed; the error has no id.
        let o = handle(&s, r#"{"jsonrpc":"2.0","id":null,"method":"nope"}"#, None);
        assert_eq!(code(&o), -32600);
        assert!(message(&o).get("id").is_none());
    }

    #[test]
    fn a_removed_method_is_refused_before_meta_is_read() {
        let o = handle(
            &server(),
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
            None,
        );
        assert_eq!(code(&o), -32601);
        assert_eq!(message(&o)["error"]["data"]["supported"][0], "2026-07-28");
    }

    #[test]
    fn meta_before_the_protocol_version_header() {
        let mut m = mirror("tools/list", None);
        m.protocol_version = Mirrored::Value("1999-01-01".into());
        let o = handle(
            &server(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            Some(&m),
        );
        assert_eq!(code(&o), -32602);
    }

    #[test]
    fn the_version_header_before_the_version_itself() {
        let body = request("tools/list", "").replace("2026-07-28", "1999-01-01");
        // The header disagrees with the body, and the body's version is unsupported.
        let o = handle(&server(), &body, Some(&mirror("tools/list", None)));
        assert_eq!(code(&o), -32020);
        // Header and body agree on an unsupported version; Mcp-Method is wrong too.
        let mut m = mirror("tools/call", None);
        m.protocol_version = Mirrored::Value("1999-01-01".into());
        let o = handle(&server(), &body, Some(&m));
        assert_eq!(code(&o), -32022);
    }

    #[test]
    fn method_and_name_headers_before_routing_and_params() {
        let s = server();
        let unknown = request("nope/nope", "");
        let o = handle(&s, &unknown, Some(&mirror("tools/list", None)));
        assert_eq!(
            code(&o),
            -32020,
            "Mcp-Method mismatch beats an unknown method"
        );
        let o = handle(&s, &unknown, Some(&mirror("nope/nope", None)));
        assert_eq!(code(&o), -32601);
        // Mcp-Name disagrees, and the tool is unknown.
        let call = request("tools/call", r#""name":"ghost""#);
        let o = handle(&s, &call, Some(&mirror("tools/call", Some("echo"))));
        assert_eq!(code(&o), -32020);
        let o = handle(&s, &call, Some(&mirror("tools/call", Some("ghost"))));
        assert_eq!(code(&o), -32602);
    }

    #[test]
    fn capability_before_params() {
        // No prompts are registered: prompts/get is not advertised, whatever its params.
        let body = request("prompts/get", r#""name":7"#);
        let o = handle(&server(), &body, None);
        assert_eq!(code(&o), -32601);
        assert_eq!(message(&o)["id"], 1);
    }

    #[test]
    fn params_before_the_param_headers() {
        let s = server();
        let mut m = mirror("tools/call", Some("echo"));
        m.params.push(("text".into(), Mirrored::Value("ho".into())));
        // Arguments that are not an object are refused before the header comparison.
        let body = request("tools/call", r#""name":"echo","arguments":[1]"#);
        assert_eq!(code(&handle(&s, &body, Some(&m))), -32602);
        // Well-formed arguments: now the disagreeing Mcp-Param-Text header counts.
        let body = request("tools/call", r#""name":"echo","arguments":{"text":"hi"}"#);
        assert_eq!(code(&handle(&s, &body, Some(&m))), -32020);
    }

    #[tokio::test]
    async fn a_request_that_passes_every_rung_runs() {
        let s = server();
        let body = request("tools/call", r#""name":"echo","arguments":{"text":"hi"}"#);
        let mut m = mirror("tools/call", Some("echo"));
        m.params.push(("text".into(), Mirrored::Value("hi".into())));
        let v = answer(handle(&s, &body, Some(&m))).await;
        assert_eq!(v["result"]["content"][0]["text"], "hi");
        // Invalid arguments are a tool result, not a protocol error.
        let body = request("tools/call", r#""name":"echo","arguments":{"text":1}"#);
        let v = answer(handle(&s, &body, None)).await;
        assert_eq!(v["result"]["isError"], true);
    }
}

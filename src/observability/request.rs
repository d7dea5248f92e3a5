//! One span and one set of metrics per MCP request.
//!
//! The transport opens a [`RequestProbe`] when a request arrives: it creates the request's
//! span (fields named after the OpenTelemetry MCP semantic conventions, filled in by
//! [`on_request`] once dispatch has read the body) and counts the request in flight. The
//! probe records the request's outcome and duration when the final response is produced, or
//! `cancelled` when the client goes away first.
//!
//! Arguments, results and credentials are never recorded.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use http::{Extensions, HeaderMap};
use metrics::SharedString;
use serde_json::value::RawValue;
use tracing::Span;
use tracing::field::{Empty, Field, Value, display};

use super::TraceParent;
use super::metrics::{RequestOutcome, record_request_finished, record_request_started};
use crate::protocol::methods::{self, PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
use crate::protocol::{RequestId, RequestMeta};

/// The `method` label of requests whose `Mcp-Method` names no known method.
const OTHER: &str = "_other";

/// Every method this revision serves, for bounded `method` labels.
const KNOWN_METHODS: &[&str] = &[
    methods::DISCOVER,
    methods::TOOLS_LIST,
    methods::TOOLS_CALL,
    methods::RESOURCES_LIST,
    methods::RESOURCE_TEMPLATES_LIST,
    methods::RESOURCES_READ,
    methods::PROMPTS_LIST,
    methods::PROMPTS_GET,
    methods::COMPLETION_COMPLETE,
    methods::SUBSCRIPTIONS_LISTEN,
];

fn method_label(header: Option<&str>) -> &'static str {
    match header {
        None => "",
        Some(m) => KNOWN_METHODS
            .iter()
            .copied()
            .find(|k| *k == m)
            .unwrap_or(OTHER),
    }
}

/// Opens [`RequestProbe`]s; built once per endpoint with the registry's tool and prompt
/// names, which are the only names that become label values.
#[derive(Debug, Clone, Default)]
pub struct RequestObserver {
    names: Arc<Names>,
}

#[derive(Debug, Default)]
struct Names {
    tools: HashMap<Box<str>, SharedString>,
    prompts: HashMap<Box<str>, SharedString>,
}

fn table<'a>(names: impl IntoIterator<Item = &'a str>) -> HashMap<Box<str>, SharedString> {
    names
        .into_iter()
        .map(|n| (n.into(), SharedString::from(Arc::<str>::from(n))))
        .collect()
}

impl RequestObserver {
    /// An observer labelling requests with these tool and prompt names (others are `_other`).
    pub fn new<'a>(
        tools: impl IntoIterator<Item = &'a str>,
        prompts: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        RequestObserver {
            names: Arc::new(Names {
                tools: table(tools),
                prompts: table(prompts),
            }),
        }
    }

    fn name_label(&self, method: &str, name: Option<&str>) -> SharedString {
        let table = match method {
            TOOLS_CALL => &self.names.tools,
            PROMPTS_GET => &self.names.prompts,
            _ => return SharedString::const_str(""),
        };
        name.and_then(|n| table.get(n))
            .cloned()
            .unwrap_or(SharedString::const_str(OTHER))
    }

    /// Starts observing a request, labelled from its `Mcp-Method` and `Mcp-Name` headers
    /// (dispatch rejects a request whose headers differ from its body).
    pub fn start(&self, headers: &HeaderMap) -> RequestProbe {
        let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).map(str::trim);
        let method = method_label(header("mcp-method"));
        let name = self.name_label(method, header("mcp-name"));
        let span = tracing::debug_span!(
            "mcp.request",
            mcp.method.name = Empty,
            gen_ai.operation.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            jsonrpc.request.id = Empty,
            mcp.protocol.version = Empty,
            mcp.client.name = Empty,
            trace_id = Empty,
            parent_span_id = Empty,
            error.type = Empty,
        );
        record_request_started();
        RequestProbe {
            finish: Some(Finish {
                method,
                name,
                started: Instant::now(),
                outcome: None,
                span: span.clone(),
            }),
            span,
        }
    }
}

/// One request under observation: its span, and its metrics, recorded once when the
/// outcome is known (or as `cancelled` when the probe and any tracked reply are dropped
/// first). Opened by [`RequestObserver::start`].
#[derive(Debug)]
pub struct RequestProbe {
    span: Span,
    finish: Option<Finish>,
}

impl RequestProbe {
    /// The request's span.
    pub fn span(&self) -> &Span {
        &self.span
    }

    /// Records `outcome` now, unless an outcome was already recorded or handed to
    /// [`RequestProbe::track`].
    pub fn finish(&mut self, outcome: RequestOutcome) {
        if let Some(mut f) = self.finish.take() {
            f.outcome = Some(outcome);
        }
    }

    /// Hands the outcome to a running reply: when `reply` resolves, `error_code` reads its
    /// JSON-RPC error code (`None` for a result) and the outcome is recorded; if the reply is
    /// dropped first, the outcome is `cancelled`. The reply runs inside the request's span.
    pub fn track<F>(
        &mut self,
        reply: F,
        error_code: fn(&F::Output) -> Option<i32>,
    ) -> impl Future<Output = F::Output> + Send + 'static
    where
        F: Future + Send + 'static,
    {
        let finish = self.finish.take();
        let fut = async move {
            let mut finish = finish;
            let out = reply.await;
            if let Some(f) = finish.as_mut() {
                f.outcome =
                    Some(error_code(&out).map_or(RequestOutcome::Ok, RequestOutcome::Error));
            }
            drop(finish);
            out
        };
        tracing::Instrument::instrument(fut, self.span.clone())
    }
}

#[derive(Debug)]
struct Finish {
    method: &'static str,
    name: SharedString,
    started: Instant,
    outcome: Option<RequestOutcome>,
    span: Span,
}

impl Drop for Finish {
    fn drop(&mut self) {
        let outcome = self.outcome.unwrap_or(RequestOutcome::Cancelled);
        let elapsed = self.started.elapsed();
        record_request_finished(self.method, self.name.clone(), outcome, elapsed);
        if !self.span.is_disabled() {
            if !matches!(outcome, RequestOutcome::Ok | RequestOutcome::Accepted) {
                self.span.record("error.type", outcome.as_str());
            }
            tracing::debug!(
                parent: &self.span,
                outcome = outcome.as_str(),
                duration_ms = elapsed.as_secs_f64() * 1000.0,
                "request finished"
            );
        }
    }
}

/// An optional string field value.
fn some<'a>(v: &'a Option<&str>) -> Option<&'a dyn Value> {
    v.as_ref().map(|v| v as &dyn Value)
}

fn string(raw: Option<&RawValue>) -> Option<std::borrow::Cow<'_, str>> {
    serde_json::from_str(raw?.get()).ok()
}

/// Fills in the current request span once dispatch has read the request: method, id,
/// protocol version, client name, the tool/prompt name or resource URI, and the trace
/// context (from `_meta.traceparent`, else from the HTTP `traceparent` header that the
/// transport put in `extensions` as a [`TraceParent`]).
///
/// A no-op when the current span is not an enabled request span. Everything is recorded in
/// one call, so a subscriber formats the fields once.
pub(crate) fn on_request(
    id: &RequestId,
    method: &str,
    meta: &RequestMeta,
    name: Option<&RawValue>,
    uri: Option<&RawValue>,
    extensions: &Extensions,
) {
    let span = Span::current();
    let Some(fields) = span.metadata().map(|m| m.fields()) else {
        return;
    };
    let field = |n: &str| fields.field(n);
    let (
        Some(f_method),
        Some(f_id),
        Some(f_version),
        Some(f_client),
        Some(f_operation),
        Some(f_tool),
        Some(f_prompt),
        Some(f_uri),
        Some(f_trace),
        Some(f_parent),
    ) = (
        field("mcp.method.name"),
        field("jsonrpc.request.id"),
        field("mcp.protocol.version"),
        field("mcp.client.name"),
        field("gen_ai.operation.name"),
        field("gen_ai.tool.name"),
        field("gen_ai.prompt.name"),
        field("mcp.resource.uri"),
        field("trace_id"),
        field("parent_span_id"),
    )
    else {
        return;
    };
    let client = meta.client_info.as_ref().map(|i| i.name.as_str());
    let (operation, tool, prompt, resource) = match method {
        TOOLS_CALL => (Some("execute_tool"), string(name), None, None),
        PROMPTS_GET => (None, None, string(name), None),
        RESOURCES_READ => (None, None, None, string(uri)),
        _ => (None, None, None, None),
    };
    let parent = meta
        .traceparent
        .as_deref()
        .and_then(TraceParent::parse)
        .or_else(|| extensions.get::<TraceParent>().copied());
    let id = display(id);
    let version = meta.protocol_version.as_str();
    let (tool, prompt, resource) = (tool.as_deref(), prompt.as_deref(), resource.as_deref());
    let trace = parent.as_ref().map(TraceParent::trace_id);
    let parent_id = parent.as_ref().map(TraceParent::parent_id);
    let values: [(&Field, Option<&dyn Value>); 10] = [
        (&f_method, Some(&method as &dyn Value)),
        (&f_id, Some(&id as &dyn Value)),
        (&f_version, Some(&version as &dyn Value)),
        (&f_client, some(&client)),
        (&f_operation, some(&operation)),
        (&f_tool, some(&tool)),
        (&f_prompt, some(&prompt)),
        (&f_uri, some(&resource)),
        (&f_trace, some(&trace)),
        (&f_parent, some(&parent_id)),
    ];
    span.record_all(&fields.value_set(&values));
}

/// The HTTP `traceparent` header, parsed. The transport puts it in the request extensions;
/// the request span uses it when `params._meta` carries no `traceparent`.
pub fn traceparent_header(headers: &HeaderMap) -> Option<TraceParent> {
    TraceParent::parse(headers.get("traceparent")?.to_str().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_bounded() {
        let obs = RequestObserver::new(["echo"], ["greet"]);
        assert_eq!(method_label(Some("tools/call")), "tools/call");
        assert_eq!(method_label(Some("anything/else")), OTHER);
        assert_eq!(method_label(None), "");
        assert_eq!(&*obs.name_label(TOOLS_CALL, Some("echo")), "echo");
        assert_eq!(&*obs.name_label(TOOLS_CALL, Some("greet")), OTHER);
        assert_eq!(&*obs.name_label(PROMPTS_GET, Some("greet")), "greet");
        assert_eq!(&*obs.name_label(methods::TOOLS_LIST, Some("echo")), "");
    }
}

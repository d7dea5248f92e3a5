//! One span and one set of metrics per MCP request.
//!
//! `Server::handle` opens a [`RequestProbe`] for every message, whatever the transport: it
//! creates the request's span (fields named after the OpenTelemetry MCP semantic
//! conventions, filled in by [`on_request`] once dispatch has read the body) and counts the
//! request in flight. The probe records the request's outcome and duration when the final response is produced, or
//! `cancelled` when the client goes away first.
//!
//! Arguments, results and credentials are never recorded.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use arc_swap::ArcSwap;
use http::{Extensions, HeaderValue};
use metrics::SharedString;
use serde_json::value::RawValue;
use tracing::Span;
use tracing::field::{Empty, Field, Value, display};

use super::TraceParent;
use super::metrics::{RequestOutcome, RequestSeries};
use crate::protocol::legacy;
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
    crate::protocol::TASKS_GET,
    crate::protocol::TASKS_UPDATE,
    crate::protocol::TASKS_CANCEL,
    // 2025-11-25 sessions (their requests carry no `Mcp-Method`; stdio labels them from the
    // body).
    legacy::INITIALIZE,
    legacy::PING,
    legacy::LOGGING_SET_LEVEL,
    legacy::RESOURCES_SUBSCRIBE,
    legacy::RESOURCES_UNSUBSCRIBE,
];

/// The place of a request's method label among the observer's series: a known method's
/// own, then `_other`, then none (no `Mcp-Method`).
fn method_index(header: Option<&str>) -> usize {
    match header {
        None => KNOWN_METHODS.len() + 1,
        Some(m) => KNOWN_METHODS
            .iter()
            .position(|k| *k == m)
            .unwrap_or(KNOWN_METHODS.len()),
    }
}

/// The label of the series at `index` (see [`method_index`]).
fn label_at(index: usize) -> &'static str {
    match KNOWN_METHODS.get(index) {
        Some(method) => method,
        None if index == KNOWN_METHODS.len() => OTHER,
        None => "",
    }
}

#[cfg(test)]
fn method_label(header: Option<&str>) -> &'static str {
    label_at(method_index(header))
}

/// Opens [`RequestProbe`]s; built once per endpoint with the registry's tool and prompt
/// names, which are the only names that become label values (a server's observer follows
/// its catalog: the names it serves now). Every label combination has its metric handles
/// kept here, so a request only picks one.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestObserver {
    series: Arc<AllSeries>,
}

#[derive(Debug, Default)]
struct AllSeries {
    /// One per method label ([`KNOWN_METHODS`], then `_other`, then none), name label empty
    /// (for `tools/call` and `prompts/get`: `_other`).
    methods: Vec<Arc<RequestSeries>>,
    /// Swapped whole when the catalog's names change (read only for `tools/call` and
    /// `prompts/get`).
    named: ArcSwap<Named>,
}

/// The series of each tool and prompt name.
#[derive(Debug, Default)]
struct Named {
    tools: ByName,
    prompts: ByName,
}

/// Series by tool or prompt name (looked up on every call: a quick hasher, the names are
/// the server's own).
type ByName = HashMap<Box<str>, Arc<RequestSeries>, foldhash::fast::RandomState>;

/// One series per name, kept from `old` for a name it has (its handles stay registered).
fn named<'a>(
    method: &'static str,
    names: impl IntoIterator<Item = &'a str>,
    old: &ByName,
) -> ByName {
    names
        .into_iter()
        .map(|n| {
            let series = old.get(n).cloned().unwrap_or_else(|| {
                let label = SharedString::from(Arc::<str>::from(n));
                Arc::new(RequestSeries::new(method, label))
            });
            (n.into(), series)
        })
        .collect()
}

impl RequestObserver {
    /// An observer labelling requests with these tool and prompt names (others are `_other`).
    pub(crate) fn new<'a>(
        tools: impl IntoIterator<Item = &'a str>,
        prompts: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let methods = KNOWN_METHODS
            .iter()
            .chain([&OTHER, &""])
            .map(|&m| {
                let name = if m == TOOLS_CALL || m == PROMPTS_GET {
                    OTHER
                } else {
                    ""
                };
                Arc::new(RequestSeries::new(m, SharedString::const_str(name)))
            })
            .collect();
        let none = ByName::default();
        RequestObserver {
            series: Arc::new(AllSeries {
                methods,
                named: ArcSwap::from_pointee(Named {
                    tools: named(TOOLS_CALL, tools, &none),
                    prompts: named(PROMPTS_GET, prompts, &none),
                }),
            }),
        }
    }

    /// Labels with these tool and prompt names from now on (the catalog changed); names
    /// gone are `_other` again. Shared by every clone of this observer.
    pub(crate) fn rename<'a>(
        &self,
        tools: impl IntoIterator<Item = &'a str>,
        prompts: impl IntoIterator<Item = &'a str>,
    ) {
        let old = self.series.named.load();
        self.series.named.store(Arc::new(Named {
            tools: named(TOOLS_CALL, tools, &old.tools),
            prompts: named(PROMPTS_GET, prompts, &old.prompts),
        }));
    }

    /// The series of a request with these `Mcp-Method` and `Mcp-Name` values.
    fn series(&self, method: Option<&str>, name: Option<&str>) -> Arc<RequestSeries> {
        let index = method_index(method);
        let method = label_at(index);
        let all = &self.series;
        if let (TOOLS_CALL | PROMPTS_GET, Some(n)) = (method, name) {
            let names = all.named.load();
            let table = match method {
                TOOLS_CALL => &names.tools,
                _ => &names.prompts,
            };
            if let Some(s) = table.get(n) {
                return s.clone();
            }
        }
        // An observer made with `Default` has no series: a detached one records the same.
        all.methods
            .get(index)
            .cloned()
            .unwrap_or_else(|| Arc::new(RequestSeries::new(method, SharedString::const_str(""))))
    }

    /// Starts observing a request whose `Mcp-Method` and `Mcp-Name` headers were read
    /// already (trimmed; `None` when absent or unreadable).
    pub(crate) fn start_labelled(&self, method: Option<&str>, name: Option<&str>) -> RequestProbe {
        let series = self.series(method, name);
        let span = tracing::debug_span!(
            "mcp.request",
            mcp.method.name = Empty,
            gen_ai.operation.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            jsonrpc.request.id = Empty,
            mcp.protocol.version = Empty,
            mcp.session.id = Empty,
            mcp.client.name = Empty,
            trace_id = Empty,
            parent_span_id = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            otel.kind = Empty,
            otel.name = Empty,
            otel.status_code = Empty,
        );
        #[cfg(feature = "otel")]
        if super::otel::exporting() {
            span.record("otel.kind", "server");
        }
        series.started();
        RequestProbe {
            finish: Some(Finish {
                series,
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
/// first). Opened by [`RequestObserver::start_labelled`].
#[derive(Debug)]
pub(crate) struct RequestProbe {
    span: Span,
    finish: Option<Finish>,
}

impl RequestProbe {
    /// The request's span.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Labels the request from its body, for a transport without mirrored headers: the
    /// method, and for `tools/call` and `prompts/get` the name (`name`, raw JSON).
    pub(crate) fn label(
        &mut self,
        observer: &RequestObserver,
        method: &str,
        name: Option<&RawValue>,
    ) {
        if let Some(f) = self.finish.as_mut() {
            let name = match method {
                TOOLS_CALL | PROMPTS_GET => string(name),
                _ => None,
            };
            f.series = observer.series(Some(method), name.as_deref());
        }
    }

    /// Records `outcome` now, unless an outcome was already recorded or handed to
    /// [`RequestProbe::track`].
    pub(crate) fn finish(&mut self, outcome: RequestOutcome) {
        if let Some(mut f) = self.finish.take() {
            f.outcome = Some(outcome);
        }
    }

    /// Hands the outcome to a running reply: when `reply` resolves, `error_code` reads its
    /// JSON-RPC error code (`None` for a result) and the outcome is recorded; if the reply is
    /// dropped first, the outcome is `cancelled`. The reply runs inside the request's span.
    pub(crate) fn track<F>(
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
    series: Arc<RequestSeries>,
    started: Instant,
    outcome: Option<RequestOutcome>,
    span: Span,
}

impl Drop for Finish {
    fn drop(&mut self) {
        let outcome = self.outcome.unwrap_or(RequestOutcome::Cancelled);
        let elapsed = self.started.elapsed();
        self.series.finished(outcome, elapsed);
        if !self.span.is_disabled() {
            if !matches!(outcome, RequestOutcome::Ok | RequestOutcome::Accepted) {
                self.span.record("error.type", outcome.as_str());
                if let RequestOutcome::Error(code) = outcome {
                    self.span.record("rpc.response.status_code", display(code));
                }
                #[cfg(feature = "otel")]
                if super::otel::exporting() {
                    self.span.record("otel.status_code", "error");
                }
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
    crate::protocol::strict::json_str(raw?)
}

/// What the request span records of a request's `_meta` (borrowed: dispatch has it still
/// in the body for a 2026 request, in a [`RequestMeta`] for a legacy one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpanMeta<'a> {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub(crate) version: &'a str,
    /// The client's self-reported name.
    pub(crate) client: Option<&'a str>,
    /// `traceparent`.
    pub(crate) traceparent: Option<&'a str>,
    /// `tracestate` (exported with the caller's context, feature `otel`).
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) tracestate: Option<&'a str>,
    /// A 2025-11-25 session's store key (the random part sealed in its id, never the id
    /// itself: that is the client's credential for the session).
    pub(crate) session: Option<&'a str>,
}

impl<'a> From<&'a RequestMeta> for SpanMeta<'a> {
    fn from(meta: &'a RequestMeta) -> Self {
        SpanMeta {
            version: &meta.protocol_version,
            client: meta.client_info.as_ref().map(|i| i.name.as_str()),
            traceparent: meta.traceparent.as_deref(),
            tracestate: meta.tracestate.as_deref(),
            session: None,
        }
    }
}

/// Fills in the current request span once dispatch has read the request: method, id,
/// protocol version, legacy session, client name, the tool/prompt name or resource URI, and the trace
/// context (from `_meta.traceparent`, else from the HTTP `traceparent` header that the
/// transport put in `extensions` as a [`TraceParent`]).
///
/// A no-op when the current span is not an enabled request span. Everything is recorded in
/// one call, so a subscriber formats the fields once.
pub(crate) fn on_request(
    id: &RequestId,
    method: &str,
    meta: SpanMeta<'_>,
    name: Option<&RawValue>,
    uri: Option<&RawValue>,
    extensions: &Extensions,
) {
    // The request span is a debug span: with debug off everywhere (the common case) there is
    // none to fill in, and that is known without looking up the current span.
    if !tracing::level_enabled!(tracing::Level::DEBUG) {
        return;
    }
    let span = Span::current();
    let Some(fields) = span.metadata().map(|m| m.fields()) else {
        return;
    };
    let field = |n: &str| fields.field(n);
    let (
        Some(f_method),
        Some(f_id),
        Some(f_version),
        Some(f_session),
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
        field("mcp.session.id"),
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
    let client = meta.client;
    let (operation, tool, prompt, resource) = match method {
        TOOLS_CALL => (Some("execute_tool"), string(name), None, None),
        PROMPTS_GET => (None, None, string(name), None),
        RESOURCES_READ => (None, None, None, string(uri)),
        _ => (None, None, None, None),
    };
    let caller = caller(meta.traceparent, meta.tracestate, extensions);
    let parent = caller.map(|(p, _)| p);
    let id = display(id);
    let version = meta.version;
    let session = meta.session;
    let (tool, prompt, resource) = (tool.as_deref(), prompt.as_deref(), resource.as_deref());
    let trace = parent.as_ref().map(TraceParent::trace_id);
    let parent_id = parent.as_ref().map(TraceParent::parent_id);
    let values: [(&Field, Option<&dyn Value>); 11] = [
        (&f_method, Some(&method as &dyn Value)),
        (&f_id, Some(&id as &dyn Value)),
        (&f_version, Some(&version as &dyn Value)),
        (&f_session, some(&session)),
        (&f_client, some(&client)),
        (&f_operation, some(&operation)),
        (&f_tool, some(&tool)),
        (&f_prompt, some(&prompt)),
        (&f_uri, some(&resource)),
        (&f_trace, some(&trace)),
        (&f_parent, some(&parent_id)),
    ];
    span.record_all(&fields.value_set(&values));
    #[cfg(feature = "otel")]
    if super::otel::exporting() {
        super::otel::on_request(&span, method, tool.or(prompt), caller);
    }
}

/// The caller's span: `_meta`'s `traceparent` (with its `tracestate`, which goes with the
/// `traceparent` it came with), else the HTTP `traceparent` header the transport put in
/// `extensions` (without a state).
fn caller<'a>(
    traceparent: Option<&str>,
    tracestate: Option<&'a str>,
    extensions: &Extensions,
) -> Option<(TraceParent, Option<&'a str>)> {
    match traceparent.and_then(TraceParent::parse) {
        Some(from_meta) => Some((from_meta, tracestate)),
        None => extensions.get::<TraceParent>().map(|p| (*p, None)),
    }
}

/// When traces are exported, names the current request span (`{method} {target}`) and
/// makes the caller's span its parent (`traceparent` and `tracestate` from `_meta`, else
/// the HTTP header in `extensions`), as [`on_request`] does later: for a path that makes
/// store round trips before it can call [`on_request`] (a legacy request loads its session
/// first). A round trip's span is a child of the request span, and the OTel request span
/// starts with its first child: its name and parent must be set by then. A no-op without
/// the `otel` feature or an exporter.
pub(crate) fn on_trace(
    method: &str,
    name: Option<&RawValue>,
    traceparent: Option<&str>,
    tracestate: Option<&str>,
    extensions: &Extensions,
) {
    #[cfg(feature = "otel")]
    if super::otel::exporting() {
        let span = Span::current();
        if span.is_disabled() {
            return;
        }
        let target = match method {
            TOOLS_CALL | PROMPTS_GET => string(name),
            _ => None,
        };
        let parent = caller(traceparent, tracestate, extensions);
        super::otel::on_request(&span, method, target.as_deref(), parent);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (method, name, traceparent, tracestate, extensions);
}

/// Names the current request span for a legacy client's answer to a server-to-client
/// request (a JSON-RPC response, no method) and, when traces are exported, makes the HTTP
/// `traceparent` header (in `extensions`) its parent; the answer may travel on over the bus
/// in that trace. A no-op without the `otel` feature or an exporter.
pub(crate) fn on_answer(extensions: &Extensions) {
    #[cfg(feature = "otel")]
    if super::otel::exporting() {
        let span = Span::current();
        if !span.is_disabled() {
            span.record("otel.name", "mcp.input_answer");
            if let Some(tp) = extensions.get::<TraceParent>() {
                super::otel::set_remote_parent(&span, tp, None);
            }
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = extensions;
}

/// The HTTP `traceparent` header, parsed. The transport puts it in the request extensions;
/// the request span uses it when `params._meta` carries no `traceparent`.
pub(crate) fn traceparent_header(value: Option<&HeaderValue>) -> Option<TraceParent> {
    TraceParent::parse(value?.to_str().ok()?)
}

/// The `traceparent` header's name.
pub(crate) const TRACEPARENT: &str = "traceparent";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_bounded() {
        let obs = RequestObserver::new(["echo"], ["greet"]);
        let labels = |m, n| {
            let s = obs.series(m, n);
            format!("{s:?}")
        };
        assert_eq!(method_label(Some("tools/call")), "tools/call");
        assert_eq!(method_label(Some("anything/else")), OTHER);
        for m in [
            "tasks/get",
            "tasks/cancel",
            "initialize",
            "ping",
            "logging/setLevel",
        ] {
            assert_eq!(method_label(Some(m)), m);
        }
        assert_eq!(method_label(None), "");
        assert!(labels(Some(TOOLS_CALL), Some("echo")).contains(r#"name: "echo""#));
        assert!(labels(Some(TOOLS_CALL), Some("greet")).contains(r#"name: "_other""#));
        assert!(labels(Some(TOOLS_CALL), None).contains(r#"name: "_other""#));
        assert!(labels(Some(PROMPTS_GET), Some("greet")).contains(r#"name: "greet""#));
        let list = labels(Some(methods::TOOLS_LIST), Some("echo"));
        assert!(list.contains(r#"method: "tools/list""#) && list.contains(r#"name: """#));
        assert!(labels(Some("x/y"), None).contains(r#"method: "_other""#));
        assert!(labels(None, None).contains(r#"method: """#));
        // The same labels, the same series.
        assert!(Arc::ptr_eq(
            &obs.series(Some(TOOLS_CALL), Some("echo")),
            &obs.series(Some(TOOLS_CALL), Some("echo"))
        ));
    }

    #[test]
    fn labels_follow_the_names_served_now() {
        let obs = RequestObserver::new(["echo"], ["greet"]);
        let echo = obs.series(Some(TOOLS_CALL), Some("echo"));
        let clone = obs.clone();
        clone.rename(["echo", "added"], []);
        let labels = |n| format!("{:?}", obs.series(Some(TOOLS_CALL), Some(n)));
        assert!(labels("added").contains(r#"name: "added""#));
        // A name still served keeps its series; one gone is `_other` again.
        assert!(Arc::ptr_eq(
            &echo,
            &obs.series(Some(TOOLS_CALL), Some("echo"))
        ));
        let greet = format!("{:?}", obs.series(Some(PROMPTS_GET), Some("greet")));
        assert!(greet.contains(r#"name: "_other""#), "{greet}");
        clone.rename([], []);
        assert!(labels("added").contains(r#"name: "_other""#));
    }
}

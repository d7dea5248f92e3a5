//! The object-safe [`ToolHandler`] every tool implements, and per-tool tower layers: a
//! tool's handler as a [`ToolService`] that any [`tower::Layer`] can wrap
//! ([`ToolDef::layer`](super::ToolDef::layer)), and the time limit around the whole layered
//! call ([`ToolDef::timeout`](super::ToolDef::timeout), a server-wide default on
//! [`ServerBuilder::tool_timeout`](crate::ServerBuilder::tool_timeout)).
//!
//! The service never fails for the tool's own reasons: its response is the tool's
//! a `Result<CallToolResult, HandlerError>` (a result or a [`HandlerError`]); its error is what a layer adds (a tower
//! `timeout::error::Elapsed`, a `load_shed::error::Overloaded`, a user layer's own error),
//! which the tool-call path turns into a tool result with `isError: true`.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceExt as _};

use super::context::RequestContext;
use super::error::HandlerError;
use crate::error::BoxError;
use crate::protocol::CallToolResult;

/// The object-safe core of a tool: takes validated JSON arguments, answers a result.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool. `arguments` already matches the tool's `inputSchema`.
    fn call(
        &self,
        ctx: RequestContext,
        arguments: Value,
    ) -> BoxFuture<'static, Result<CallToolResult, HandlerError>>;
}

/// One call of a tool, as its layers see it: the tool's name, the request context and the
/// arguments (already checked against the tool's `inputSchema`).
pub struct ToolRequest {
    name: Arc<str>,
    ctx: RequestContext,
    arguments: Value,
}

impl fmt::Debug for ToolRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRequest")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl ToolRequest {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The request context (principal, `_meta`, cancellation, …).
    pub fn context(&self) -> &RequestContext {
        &self.ctx
    }

    /// The arguments.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The arguments, to change them before the handler sees them (they were checked
    /// against the schema before the layers ran, and are not checked again).
    pub fn arguments_mut(&mut self) -> &mut Value {
        &mut self.arguments
    }
}

/// What a tool answers: its result, or its [`HandlerError`] (a message for the model, an
/// unexpected failure, a protocol error, or [`InputRequired`](super::InputRequired)).
pub(crate) type ToolResponse = Result<CallToolResult, HandlerError>;

/// A tool's handler as a cloneable [`tower::Service`], the type every
/// [`ToolDef::layer`](super::ToolDef::layer) wraps.
///
/// Its error type is a boxed error so that any layer fits; the handler itself never
/// produces one (its failures are in its `Result`).
#[derive(Clone)]
pub struct ToolService(BoxCloneSyncService<ToolRequest, ToolResponse, BoxError>);

impl fmt::Debug for ToolService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolService")
    }
}

impl ToolService {
    /// Boxes any cloneable service of tool requests.
    pub fn new<S>(service: S) -> Self
    where
        S: Service<ToolRequest, Response = ToolResponse> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        ToolService(BoxCloneSyncService::new(service.map_err(Into::into)))
    }

    /// The handler as a service.
    pub(crate) fn from_handler(handler: Arc<dyn ToolHandler>) -> Self {
        ToolService::new(tower::service_fn(move |req: ToolRequest| {
            let call = handler.call(req.ctx, req.arguments);
            async move { Ok::<_, Infallible>(call.await) }
        }))
    }
}

impl Service<ToolRequest> for ToolService {
    type Response = ToolResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ToolResponse, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: ToolRequest) -> Self::Future {
        self.0.call(req)
    }
}

/// A boxed `Layer<ToolService>`, kept until the server is built.
pub(crate) type BoxedLayer = Box<dyn FnOnce(ToolService) -> ToolService + Send + Sync>;

/// A tool's handler behind its layers and time limit: what the registry keeps for a tool
/// that has either (a tool with neither keeps its plain handler).
pub(crate) struct Layered {
    name: Arc<str>,
    service: ToolService,
    timeout: Option<Duration>,
}

impl Layered {
    /// `handler` wrapped in `layers` (the first added innermost), limited to `timeout`.
    pub(crate) fn new(
        name: &str,
        handler: Arc<dyn ToolHandler>,
        layers: Vec<BoxedLayer>,
        timeout: Option<Duration>,
    ) -> Self {
        let service = layers
            .into_iter()
            .fold(ToolService::from_handler(handler), |s, layer| layer(s));
        Layered {
            name: name.into(),
            service,
            timeout,
        }
    }
}

/// The tool result for a call that ran out of time.
fn timed_out(name: &str, after: Option<Duration>) -> CallToolResult {
    tracing::warn!(
        tool = name,
        ?after,
        "tool call timed out; handler cancelled"
    );
    CallToolResult::error(match after {
        Some(d) => format!("Tool {name} timed out after {} ms", d.as_millis()),
        None => format!("Tool {name} timed out"),
    })
}

/// What a layer's own error becomes: a timeout or an overload is a tool error result that
/// says so; anything else is an unexpected failure (logged; the model reads "Internal
/// error").
fn refused(name: &str, error: BoxError) -> ToolResponse {
    if error.is::<tower::timeout::error::Elapsed>() {
        return Ok(timed_out(name, None));
    }
    if error.is::<tower::load_shed::error::Overloaded>() {
        tracing::warn!(tool = name, "tool call refused: over its concurrency limit");
        return Ok(CallToolResult::error(format!(
            "Tool {name} is busy (too many calls at once); try again later"
        )));
    }
    Err(HandlerError::unexpected(error))
}

impl ToolHandler for Layered {
    fn call(&self, ctx: RequestContext, arguments: Value) -> BoxFuture<'static, ToolResponse> {
        let name = self.name.clone();
        let req = ToolRequest {
            name: name.clone(),
            ctx,
            arguments,
        };
        // Readiness (a concurrency limit's wait) is part of the call, so the time limit
        // covers it too.
        let call = self.service.clone().oneshot(req);
        let timeout = self.timeout;
        Box::pin(async move {
            let outcome = match timeout {
                // Dropping `call` drops the handler's future: the handler is cancelled.
                Some(d) => match tokio::time::timeout(d, call).await {
                    Ok(outcome) => outcome,
                    Err(_) => return Ok(timed_out(&name, Some(d))),
                },
                None => call.await,
            };
            outcome.unwrap_or_else(|e| refused(&name, e))
        })
    }
}

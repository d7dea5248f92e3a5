//! Tools: definitions, and typed handlers whose argument type yields `inputSchema` (the
//! object-safe [`ToolHandler`] they implement is in `tool_layer`, beneath the layers).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::RequestContext;
use super::error::HandlerError;
use super::function::Handler;
use super::state::StateType;
use super::tool_layer::{BoxedLayer, Layered, ToolHandler, ToolRequest, ToolResponse, ToolService};
use crate::Error;
use crate::error::BoxError;
use crate::protocol::{CallToolResult, ContentBlock, Icon, JsonObject, Tool, ToolAnnotations};

/// Values a tool handler may return.
pub trait IntoCallToolResult {
    /// Converts into a tool result.
    fn into_call_tool_result(self) -> CallToolResult;
}

impl IntoCallToolResult for CallToolResult {
    fn into_call_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoCallToolResult for String {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoCallToolResult for &'static str {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoCallToolResult for ContentBlock {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoCallToolResult for Vec<ContentBlock> {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

/// Reads schema-validated arguments into the handler's type.
fn typed<A: DeserializeOwned>(arguments: Value) -> Result<A, HandlerError> {
    serde_json::from_value(arguments)
        .map_err(|e| HandlerError::new(format!("Invalid arguments: {e}")))
}

/// A [`Handler`] taking the arguments as `A` (`Value` for a raw handler).
struct TypedFn<H, M, A>(H, PhantomData<fn() -> (M, A)>);

impl<H, M, A, R> TypedFn<H, M, A>
where
    H: Handler<M, (A,), Output = Result<R, HandlerError>>,
    A: 'static,
    M: 'static,
    R: IntoCallToolResult,
{
    /// Runs the handler on arguments read into its type.
    fn run(&self, ctx: RequestContext, args: A) -> BoxFuture<'static, ToolResponse> {
        // Mapped, not awaited in an `async` block: one would hold the handler's future and a
        // second copy of it.
        let fut = self.0.call(ctx, (args,));
        Box::pin(fut.map(|r| r.map(IntoCallToolResult::into_call_tool_result)))
    }
}

/// A typed handler that reads its arguments straight from their JSON text, with no
/// `serde_json::Value` between (used for a tool whose input schema is plain enough to check
/// on that text: see `plain_schema`).
pub(crate) trait DirectCall: Send + Sync {
    /// Runs the handler on `arguments`, the JSON text of arguments already shown valid.
    fn call_text(&self, ctx: RequestContext, arguments: &[u8]) -> BoxFuture<'static, ToolResponse>;
}

impl<H, M, A, R> DirectCall for TypedFn<H, M, A>
where
    H: Handler<M, (A,), Output = Result<R, HandlerError>>,
    A: DeserializeOwned + 'static,
    M: 'static,
    R: IntoCallToolResult,
{
    fn call_text(&self, ctx: RequestContext, arguments: &[u8]) -> BoxFuture<'static, ToolResponse> {
        match serde_json::from_slice::<A>(arguments) {
            Ok(args) => self.run(ctx, args),
            // Text the type does not read the way a `Value` of it would (a duplicated
            // member, say) goes the general way, to the same answer as any other call. (The
            // text was read as JSON already, so reading it as a `Value` does not fail.)
            Err(_) => {
                let value = serde_json::from_slice(arguments).unwrap_or_default();
                ToolHandler::call(self, ctx, value)
            }
        }
    }
}

impl<H, M, A, R> ToolHandler for TypedFn<H, M, A>
where
    H: Handler<M, (A,), Output = Result<R, HandlerError>>,
    A: DeserializeOwned + 'static,
    M: 'static,
    R: IntoCallToolResult,
{
    fn call(
        &self,
        ctx: RequestContext,
        arguments: Value,
    ) -> BoxFuture<'static, Result<CallToolResult, HandlerError>> {
        match typed(arguments) {
            Ok(args) => self.run(ctx, args),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

/// The JSON Schema of `T` as an object (2020-12, as schemars generates it).
pub(crate) fn schema_object<T: JsonSchema>() -> JsonObject {
    match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// A tool definition with its handler, ready to register on a
/// [`ServerBuilder`](crate::ServerBuilder).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use stateless_mcp::{HandlerError, RequestContext, ToolDef};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Echo { text: String }
///
/// let echo = ToolDef::new("echo")
///     .description("Returns its input")
///     .handler(|_ctx: RequestContext, args: Echo| async move {
///         Ok::<_, HandlerError>(args.text)
///     });
/// ```
#[must_use]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: Option<Arc<dyn ToolHandler>>,
    /// The same handler, when it is typed and may read its arguments from their text.
    pub(crate) direct: Option<Arc<dyn DirectCall>>,
    pub(crate) scopes: Vec<String>,
    pub(crate) state: Option<StateType>,
    pub(crate) task_support: TaskSupport,
    pub(crate) idempotency_keys: bool,
    layers: Vec<BoxedLayer>,
    timeout: Option<Duration>,
}

/// Whether a tool may run as a task of the Tasks extension (`io.modelcontextprotocol/tasks`),
/// set with [`ToolDef::task_support`].
///
/// A task-capable tool called by a client that declared the extension answers at once with a
/// task handle; its handler (the same code as for an inline call) runs on, and the client
/// follows it with `tasks/get`, answers its [`InputRequired`](super::InputRequired) questions with `tasks/update`
/// and stops it with `tasks/cancel`, on any replica.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never a task: the call is always answered inline (the default).
    #[default]
    Forbidden,
    /// A task when the client declared the extension, inline otherwise.
    Optional,
    /// Only as a task: a client that did not declare the extension gets `-32021` naming it.
    Required,
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// A tool named `name` (no handler yet; one of the `handler` methods sets it).
    pub fn new(name: impl Into<String>) -> Self {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), "object".into());
        schema.insert("additionalProperties".into(), false.into());
        ToolDef {
            tool: Tool::new(name, schema),
            handler: None,
            direct: None,
            scopes: Vec::new(),
            state: None,
            task_support: TaskSupport::Forbidden,
            idempotency_keys: false,
            layers: Vec::new(),
            timeout: None,
        }
    }

    /// Lets the tool run as a task (see [`TaskSupport`]).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Honours idempotency keys (off by default): a call that carries one (the
    /// `Idempotency-Key` HTTP header, or `_meta["dev.stateless-mcp/idempotency-key"]`) runs
    /// the handler at most once per key, on any replica sharing the server's
    /// [`IdempotencyStore`](crate::extend::IdempotencyStore); a retry with the same key and
    /// arguments gets the first result (success or `isError`), the same key with other
    /// arguments is refused (`-32602`, HTTP 422). For tools with side effects (a payment, a
    /// ticket, an e-mail) that clients or gateways may retry. See `docs/idempotency.md`.
    ///
    /// ```
    /// use stateless_mcp::{HandlerError, RequestContext, ToolDef};
    ///
    /// let pay = ToolDef::new("pay")
    ///     .idempotency_keys(true)
    ///     .raw_handler(|_ctx: RequestContext, _args: serde_json::Value| async move {
    ///         Ok::<_, HandlerError>("paid")
    ///     });
    /// # let _ = pay;
    /// ```
    pub fn idempotency_keys(mut self, yes: bool) -> Self {
        self.idempotency_keys = yes;
        self
    }

    /// The OAuth scopes a caller needs to call this tool (all of them). An authorization
    /// layer answers a call without them with a `403` step-up challenge, and `tools/list`
    /// shows the tool only to callers that have them.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = super::scopes::collect(scopes);
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// Sets the description the model reads.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// Sets behaviour hints (replacing any set by the hint methods below).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    fn hint(mut self, set: impl FnOnce(ToolAnnotations) -> ToolAnnotations) -> Self {
        let current = self.tool.annotations.take().unwrap_or_default();
        self.tool.annotations = Some(set(current));
        self
    }

    /// Hints that the tool leaves its environment unchanged (`readOnlyHint`).
    ///
    /// ```
    /// use stateless_mcp::ToolDef;
    ///
    /// let lookup = ToolDef::new("lookup").read_only(true).idempotent(true).open_world(false);
    /// let delete = ToolDef::new("delete").destructive(true).idempotent(true);
    /// assert_eq!(lookup.definition().annotations.as_ref().unwrap().read_only_hint, Some(true));
    /// # let _ = delete;
    /// ```
    pub fn read_only(self, yes: bool) -> Self {
        self.hint(|a| a.read_only(yes))
    }

    /// Hints that the tool may perform destructive updates (`destructiveHint`).
    pub fn destructive(self, yes: bool) -> Self {
        self.hint(|a| a.destructive(yes))
    }

    /// Hints that calling it twice with the same arguments has no further effect
    /// (`idempotentHint`).
    pub fn idempotent(self, yes: bool) -> Self {
        self.hint(|a| a.idempotent(yes))
    }

    /// Hints that the tool talks to an open world of external entities (`openWorldHint`).
    pub fn open_world(self, yes: bool) -> Self {
        self.hint(|a| a.open_world(yes))
    }

    /// Sets icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// Sets the tool's `_meta`.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// Replaces the input schema (used with [`ToolDef::raw_handler`]).
    pub fn input_schema(mut self, schema: JsonObject) -> Self {
        self.tool.input_schema = schema;
        self
    }

    /// Sets an output schema by hand (see [`ToolDef::structured_handler`] for a typed one).
    pub fn output_schema(mut self, schema: JsonObject) -> Self {
        self.tool.output_schema = Some(schema);
        self
    }

    /// A handler taking typed arguments; `A`'s JSON Schema becomes `inputSchema`. The
    /// handler is an async `Fn(RequestContext, A)`, or `Fn(RequestContext, State<S>, A)` to
    /// receive the application [`State`](super::State) (see [`Handler`]).
    ///
    /// Arguments are validated against that schema before the handler runs; a failure is a
    /// tool result with `isError: true` naming what is wrong.
    pub fn handler<M, A, H, R>(mut self, f: H) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        M: 'static,
        H: Handler<M, (A,), Output = Result<R, HandlerError>>,
        R: IntoCallToolResult,
    {
        self.tool.input_schema = schema_object::<A>();
        self.state = H::state_type();
        self.typed_handler(TypedFn(f, PhantomData))
    }

    /// Sets a typed handler (one that may also read its arguments from their text).
    fn typed_handler<T: ToolHandler + DirectCall>(mut self, handler: T) -> Self {
        let handler = Arc::new(handler);
        self.direct = Some(handler.clone());
        self.handler = Some(handler);
        self
    }

    /// A handler with typed arguments and a typed output: `O`'s schema becomes
    /// `outputSchema`, and the output is sent as `structuredContent` plus a text mirror.
    pub fn structured_handler<M, A, O, H>(mut self, f: H) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        M: 'static,
        H: Handler<M, (A,), Output = Result<O, HandlerError>>,
    {
        self.tool.input_schema = schema_object::<A>();
        self.tool.output_schema = Some(schema_object::<O>());
        self.state = H::state_type();
        let structured = move |ctx: RequestContext, args: A| {
            let fut = f.call(ctx, (args,));
            async move {
                let value = serde_json::to_value(fut.await?).map_err(|e| {
                    HandlerError::from(Error::internal(format!("output did not serialize: {e}")))
                })?;
                Ok(CallToolResult::structured(value))
            }
        };
        self.typed_handler(TypedFn::<_, (RequestContext, A), A>(
            structured,
            PhantomData,
        ))
    }

    /// A handler taking the arguments as JSON, validated against the schema set with
    /// [`ToolDef::input_schema`] (by default: an object with no properties).
    pub fn raw_handler<M, H, R>(mut self, f: H) -> Self
    where
        M: 'static,
        H: Handler<M, (Value,), Output = Result<R, HandlerError>>,
        R: IntoCallToolResult,
    {
        self.state = H::state_type();
        self.handler = Some(Arc::new(TypedFn(f, PhantomData)));
        self.direct = None;
        self
    }

    /// A handler implementing [`ToolHandler`] directly.
    pub fn with_handler(mut self, handler: impl ToolHandler) -> Self {
        self.state = None;
        self.handler = Some(Arc::new(handler));
        self.direct = None;
        self
    }

    /// Wraps the tool's handler in a [`tower::Layer`]: tower's own (`ConcurrencyLimitLayer`,
    /// `LoadShedLayer`, `TimeoutLayer`, …) or your own (audit, tracing, metrics). Each call
    /// adds one around the ones before it: the last added sees the call first. The layers
    /// wrap the handler only: the ladder's checks, argument validation and the
    /// `outputSchema` check stay outside them. They apply to every run of the handler,
    /// inline or as a task.
    ///
    /// A layer sees a [`ToolRequest`] (name, context, arguments) and answers a
    /// `Result<CallToolResult, HandlerError>` (the tool's result or its [`HandlerError`]). A layer's own error is
    /// answered as a tool result with `isError: true`: tower's timeout `Elapsed` as "Tool
    /// NAME timed out", `load_shed`'s `Overloaded` as "Tool NAME is busy (too many calls at
    /// once); try again later", anything else as an unexpected failure (logged; the model
    /// reads "Internal error").
    ///
    /// Over a concurrency limit (`ConcurrencyLimitLayer::new(n)`) a call **waits** for a
    /// slot, bounded by the tool's [`timeout`](Self::timeout) (which covers the wait) and by
    /// the client (a call whose client goes away is cancelled). To **refuse** instead, add
    /// `LoadShedLayer` after it: a call over the limit is then answered at once with the
    /// "busy" result.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use stateless_mcp::handler::ToolRequest;
    /// use stateless_mcp::{HandlerError, RequestContext, ToolDef};
    /// use tower::limit::ConcurrencyLimitLayer;
    /// use tower::load_shed::LoadShedLayer;
    /// use tower::ServiceExt as _;
    ///
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Query { sql: String }
    /// let report = ToolDef::new("report")
    ///     .handler(|_ctx: RequestContext, q: Query| async move { Ok::<_, HandlerError>(q.sql) })
    ///     // At most 4 at once; a fifth waits (for at most the 30 s of the timeout).
    ///     .layer(ConcurrencyLimitLayer::new(4))
    ///     .timeout(Duration::from_secs(30))
    ///     // Your own layer: an audit line for every call, before the limit.
    ///     .layer(tower::layer::layer_fn(|inner: stateless_mcp::handler::ToolService| {
    ///         tower::service_fn(move |req: ToolRequest| {
    ///             tracing::info!(tool = req.name(), principal = ?req.context().principal(), "call");
    ///             inner.clone().oneshot(req)
    ///         })
    ///     }));
    ///
    /// // Refuse rather than wait: a call beyond 2 at once answers "busy" at once.
    /// let export = ToolDef::new("export")
    ///     .raw_handler(|_ctx: RequestContext, _args: serde_json::Value| async move {
    ///         Ok::<_, HandlerError>("done")
    ///     })
    ///     .layer(ConcurrencyLimitLayer::new(2))
    ///     .layer(LoadShedLayer::new());
    /// # let _ = (report, export);
    /// ```
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<ToolService> + Send + Sync + 'static,
        L::Service:
            tower::Service<ToolRequest, Response = ToolResponse> + Clone + Send + Sync + 'static,
        <L::Service as tower::Service<ToolRequest>>::Error: Into<BoxError>,
        <L::Service as tower::Service<ToolRequest>>::Future: Send + 'static,
    {
        self.layers
            .push(Box::new(move |inner| ToolService::new(layer.layer(inner))));
        self
    }

    /// How long one call of this tool may take, replacing the server's default
    /// ([`ServerBuilder::tool_timeout`](crate::ServerBuilder::tool_timeout)). The time
    /// covers the handler and its layers (a concurrency limit's wait included). A call that
    /// runs out of time is answered with a tool result with `isError: true`, "Tool NAME
    /// timed out after N ms" (so the model can say so or try again), and its handler is
    /// cancelled: its future is dropped at that point, so work after its next `.await`
    /// never runs.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Puts the handler behind its layers and time limit (`default` when the tool set
    /// none and is not task-capable), once, when the tool is compiled.
    pub(crate) fn finish_layers(&mut self, default: Option<Duration>) {
        let default = default.filter(|_| self.task_support == TaskSupport::Forbidden);
        let timeout = self.timeout.or(default);
        if self.layers.is_empty() && timeout.is_none() {
            return;
        }
        // Layers see the arguments as a `Value`.
        self.direct = None;
        if let Some(handler) = self.handler.take() {
            let layers = std::mem::take(&mut self.layers);
            let layered = Layered::new(&self.tool.name, handler, layers, timeout);
            self.handler = Some(Arc::new(layered));
        }
    }

    /// The wire definition.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }
}

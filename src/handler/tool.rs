//! Tools: the handler trait, typed handlers whose argument type yields `inputSchema`, and the
//! error a tool reports to the model.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::RequestContext;
use super::input::{InputRequired, Stop};
use crate::Error;
use crate::protocol::{CallToolResult, ContentBlock, Icon, JsonObject, Tool, ToolAnnotations};

/// A failure inside a tool, or its request for input.
///
/// Converted to a result with `isError: true` and the error's message, so the model can see
/// it and correct itself. The exceptions: a [`crate::Error`] (for instance
/// `Error::missing_client_capability`) is answered as the JSON-RPC error it stands for, and
/// an [`InputRequired`] as an `input_required` result. Any `std::error::Error` converts with
/// `?`.
pub struct ToolError(Repr);

enum Repr {
    Message(String),
    Protocol(Error),
    Input(InputRequired),
}

impl ToolError {
    /// A tool error with this message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(Repr::Message(message.into()))
    }

    /// Splits into a tool result, a protocol error or a request for input.
    pub(crate) fn into_outcome(self) -> Result<CallToolResult, Stop> {
        match self.0 {
            Repr::Message(m) => Ok(CallToolResult::error(m)),
            Repr::Protocol(e) => Err(Stop::Error(e)),
            Repr::Input(i) => Err(Stop::Input(i)),
        }
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Message(m) => f.debug_tuple("ToolError").field(m).finish(),
            Repr::Protocol(e) => f.debug_tuple("ToolError").field(e).finish(),
            Repr::Input(i) => f.debug_tuple("ToolError").field(i).finish(),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Message(m) => f.write_str(m),
            Repr::Protocol(e) => fmt::Display::fmt(e, f),
            Repr::Input(_) => f.write_str("input required"),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
        match boxed.downcast::<Error>() {
            Ok(protocol) => ToolError(Repr::Protocol(*protocol)),
            Err(other) => ToolError(Repr::Message(other.to_string())),
        }
    }
}

impl From<InputRequired> for ToolError {
    fn from(i: InputRequired) -> Self {
        ToolError(Repr::Input(i))
    }
}

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

/// The object-safe core of a tool: takes validated JSON arguments, answers a result.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool. `arguments` already matches the tool's `inputSchema`.
    fn call(
        &self,
        ctx: RequestContext,
        arguments: Value,
    ) -> BoxFuture<'static, Result<CallToolResult, ToolError>>;
}

struct RawFn<F>(F);

impl<F, Fut, R> ToolHandler for RawFn<F>
where
    F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    R: IntoCallToolResult,
{
    fn call(
        &self,
        ctx: RequestContext,
        arguments: Value,
    ) -> BoxFuture<'static, Result<CallToolResult, ToolError>> {
        let fut = (self.0)(ctx, arguments);
        Box::pin(async move { fut.await.map(IntoCallToolResult::into_call_tool_result) })
    }
}

/// Reads schema-validated arguments into the handler's type.
fn typed<A: DeserializeOwned>(arguments: Value) -> Result<A, ToolError> {
    serde_json::from_value(arguments).map_err(|e| ToolError::new(format!("Invalid arguments: {e}")))
}

struct TypedFn<F, A>(F, PhantomData<fn(A)>);

impl<F, Fut, A, R> ToolHandler for TypedFn<F, A>
where
    F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    A: DeserializeOwned + 'static,
    R: IntoCallToolResult,
{
    fn call(
        &self,
        ctx: RequestContext,
        arguments: Value,
    ) -> BoxFuture<'static, Result<CallToolResult, ToolError>> {
        let fut = typed(arguments).map(|args| (self.0)(ctx, args));
        Box::pin(async move { fut?.await.map(IntoCallToolResult::into_call_tool_result) })
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
/// use stateless_mcp::{RequestContext, ToolDef, ToolError};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Echo { text: String }
///
/// let echo = ToolDef::new("echo")
///     .description("Returns its input")
///     .handler(|_ctx: RequestContext, args: Echo| async move { Ok::<_, ToolError>(args.text) });
/// ```
#[must_use]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: Option<Arc<dyn ToolHandler>>,
    pub(crate) scopes: Vec<String>,
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
            scopes: Vec::new(),
        }
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

    /// Sets behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
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

    /// A handler taking typed arguments; `A`'s JSON Schema becomes `inputSchema`.
    ///
    /// Arguments are validated against that schema before the handler runs; a failure is a
    /// tool result with `isError: true` naming what is wrong.
    pub fn handler<A, F, Fut, R>(mut self, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoCallToolResult,
    {
        self.tool.input_schema = schema_object::<A>();
        self.handler = Some(Arc::new(TypedFn(f, PhantomData)));
        self
    }

    /// A handler with typed arguments and a typed output: `O`'s schema becomes
    /// `outputSchema`, and the output is sent as `structuredContent` plus a text mirror.
    pub fn structured_handler<A, O, F, Fut>(mut self, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    {
        self.tool.input_schema = schema_object::<A>();
        self.tool.output_schema = Some(schema_object::<O>());
        let structured = move |ctx, args: A| {
            let fut = f(ctx, args);
            async move {
                let value = serde_json::to_value(fut.await?).map_err(|e| {
                    ToolError::from(Error::internal(format!("output did not serialize: {e}")))
                })?;
                Ok(CallToolResult::structured(value))
            }
        };
        self.handler = Some(Arc::new(TypedFn(structured, PhantomData)));
        self
    }

    /// A handler taking the arguments as JSON, validated against the schema set with
    /// [`ToolDef::input_schema`] (by default: an object with no properties).
    pub fn raw_handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoCallToolResult,
    {
        self.handler = Some(Arc::new(RawFn(f)));
        self
    }

    /// A handler implementing [`ToolHandler`] directly.
    pub fn with_handler(mut self, handler: impl ToolHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The wire definition.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Io;
    impl fmt::Display for Io {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("disk full")
        }
    }
    impl std::error::Error for Io {}

    #[test]
    fn std_errors_become_tool_errors_and_crate_errors_stay_protocol() {
        let r = ToolError::from(Io).into_outcome().unwrap();
        assert!(r.is_error());
        assert_eq!(r.content[0].as_text(), Some("disk full"));
        let e = ToolError::from(Error::invalid_params("bad")).into_outcome();
        assert!(matches!(e, Err(Stop::Error(e)) if e.to_wire().code == -32602));
        let i = ToolError::from(InputRequired::new().list_roots("r")).into_outcome();
        assert!(matches!(i, Err(Stop::Input(_))));
    }
}

//! Prompts.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::RequestContext;
use super::error::HandlerError;
use super::function::Handler;
use super::state::StateType;
use super::tool::schema_object;
use super::vars::typed_vars;
use crate::Error;
use crate::protocol::{GetPromptResult, Icon, Prompt, PromptArgument};

/// Prompt arguments: names to string values.
pub type PromptArguments = BTreeMap<String, String>;

/// Renders a prompt. Required arguments are checked before it runs.
pub trait PromptHandler: Send + Sync + 'static {
    /// Renders the prompt with `arguments`.
    fn get(
        &self,
        ctx: RequestContext,
        arguments: PromptArguments,
    ) -> BoxFuture<'static, Result<GetPromptResult, HandlerError>>;
}

/// A prompt's [`Handler`], taking its arguments read as `A`.
struct PromptFn<H, M, A>(H, PhantomData<fn() -> (M, A)>);

impl<H, M, A> PromptHandler for PromptFn<H, M, A>
where
    H: Handler<M, (A,), Output = Result<GetPromptResult, HandlerError>>,
    M: 'static,
    A: DeserializeOwned + 'static,
{
    fn get(
        &self,
        ctx: RequestContext,
        arguments: PromptArguments,
    ) -> BoxFuture<'static, Result<GetPromptResult, HandlerError>> {
        let fut = typed_vars::<A>(&arguments)
            .map(|args| self.0.call(ctx, (args,)))
            .map_err(|e| Error::invalid_params(format!("Invalid arguments: {e}")));
        Box::pin(async move { fut?.await })
    }
}

/// The arguments `A`'s JSON Schema declares: its properties, with their descriptions and
/// titles, required when the schema says so. None for a schema without properties (such as
/// [`PromptArguments`]'s).
fn declared_arguments<A: JsonSchema>() -> Vec<PromptArgument> {
    let schema = schema_object::<A>();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, p)| {
            let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
            let mut a = PromptArgument::new(name.clone(), required.contains(&name.as_str()));
            a.description = text("description");
            a.title = text("title");
            a
        })
        .collect()
}

/// A prompt definition with its handler.
#[must_use]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Option<Arc<dyn PromptHandler>>,
    pub(crate) scopes: Vec<String>,
    pub(crate) state: Option<StateType>,
}

impl fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptDef")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl PromptDef {
    /// A prompt named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        PromptDef {
            prompt: Prompt::new(name),
            handler: None,
            scopes: Vec::new(),
            state: None,
        }
    }

    /// The OAuth scopes a caller needs to get this prompt (all of them); `prompts/list`
    /// shows it only to callers that have them.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = super::scopes::collect(scopes);
        self
    }

    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.prompt.description = Some(d.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.prompt.title = Some(t.into());
        self
    }

    /// Sets icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.prompt.icons = Some(icons);
        self
    }

    /// Adds an argument.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
        self
    }

    /// The renderer: an async `Fn(RequestContext, A)`, or `Fn(RequestContext, State<S>, A)`
    /// (see [`Handler`]), given the arguments read as `A`.
    ///
    /// `A`'s JSON Schema declares the prompt's arguments (names, descriptions, which are
    /// required), so a struct is the whole declaration; each value arrives as text and is
    /// parsed as its field's type (a value that does not parse is `-32602`). With
    /// [`PromptArguments`] (every argument as a string) declare them with
    /// [`PromptDef::argument`] instead.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use stateless_mcp::protocol::{GetPromptResult, PromptMessage};
    /// use stateless_mcp::{PromptDef, RequestContext};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Review {
    ///     /// The code to review.
    ///     code: String,
    ///     /// How many remarks at most.
    ///     max_remarks: Option<u32>,
    /// }
    ///
    /// let review = PromptDef::new("review").handler(|_ctx: RequestContext, r: Review| async move {
    ///     let n = r.max_remarks.unwrap_or(5);
    ///     Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
    ///         "Review this in at most {n} remarks:\n{}",
    ///         r.code
    ///     ))]))
    /// });
    /// ```
    pub fn handler<M, A, H>(mut self, f: H) -> Self
    where
        M: 'static,
        A: DeserializeOwned + JsonSchema + 'static,
        H: Handler<M, (A,), Output = Result<GetPromptResult, HandlerError>>,
    {
        let declared = declared_arguments::<A>();
        if !declared.is_empty() {
            self.prompt.arguments = Some(declared);
        }
        self.state = H::state_type();
        self.handler = Some(Arc::new(PromptFn(f, PhantomData)));
        self
    }

    /// A renderer implementing [`PromptHandler`] directly.
    pub fn with_handler(mut self, h: impl PromptHandler) -> Self {
        self.state = None;
        self.handler = Some(Arc::new(h));
        self
    }

    /// The names of the required arguments.
    pub(crate) fn required_arguments(prompt: &Prompt) -> impl Iterator<Item = &str> {
        prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.as_str())
    }
}

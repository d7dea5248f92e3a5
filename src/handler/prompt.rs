//! Prompts.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::context::RequestContext;
use super::input::HandlerError;
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

struct PromptFn<F>(F);

impl<F, Fut> PromptHandler for PromptFn<F>
where
    F: Fn(RequestContext, PromptArguments) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<GetPromptResult, HandlerError>> + Send + 'static,
{
    fn get(
        &self,
        ctx: RequestContext,
        arguments: PromptArguments,
    ) -> BoxFuture<'static, Result<GetPromptResult, HandlerError>> {
        Box::pin((self.0)(ctx, arguments))
    }
}

/// A prompt definition with its handler.
#[must_use]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Option<Arc<dyn PromptHandler>>,
    pub(crate) scopes: Vec<String>,
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

    /// The renderer: `f(ctx, arguments)`.
    pub fn handler<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(RequestContext, PromptArguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, HandlerError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(PromptFn(f)));
        self
    }

    /// A renderer implementing [`PromptHandler`] directly.
    pub fn with_handler(mut self, h: impl PromptHandler) -> Self {
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

//! Handlers: small traits for tools, resources (and templates), prompts and completions, the
//! request context they receive, and the registry that freezes them when the server is built.

mod completion;
pub(crate) mod context;
pub(crate) mod header_rules;
pub(crate) mod input;
mod principal;
mod prompt;
pub(crate) mod registry;
mod resource;
mod scopes;
mod tool;
mod uri_template;

pub use completion::CompletionHandler;
pub use context::RequestContext;
pub use input::{HandlerError, Input, InputRequired};
pub use principal::Principal;
pub use prompt::{PromptArguments, PromptDef, PromptHandler};
pub use resource::{ResourceDef, ResourceHandler, ResourceTemplateDef};
pub use scopes::{ScopeHierarchy, ScopeRequirements};
pub use tool::{IntoCallToolResult, ToolDef, ToolError, ToolHandler};
pub use uri_template::{TemplateVars, UriTemplate};

//! Handlers: small traits for tools, resources (and templates), prompts and completions, the
//! request context they receive, and the registry that checks them when the server is built
//! and again at every runtime change ([`Catalog`](crate::catalog::Catalog)).

pub(crate) mod change;
pub(crate) mod completion;
pub(crate) mod context;
pub(crate) mod context_meta;
mod elicit;
mod error;
mod function;
pub(crate) mod header_rules;
pub(crate) mod input;
mod named;
mod plain_schema;
mod principal;
mod prompt;
pub(crate) mod registry;
mod resource;
mod scopes;
pub(crate) mod state;
mod tool;
mod tool_layer;
mod uri_template;
mod vars;

pub use completion::CompletionHandler;
pub use context::RequestContext;
pub use error::HandlerError;
pub use function::Handler;
pub use input::{Input, InputRequired};
pub use principal::Principal;
pub use prompt::{PromptArguments, PromptDef, PromptHandler};
pub use resource::{ResourceDef, ResourceHandler, ResourceTemplateDef};
pub use scopes::{RequiredScopes, ScopeHierarchy, ScopeRequirements};
pub use state::{State, StateType};
pub(crate) use tool::DirectCall;
pub use tool::{IntoCallToolResult, TaskSupport, ToolDef};
pub(crate) use tool_layer::ToolResponse;
pub use tool_layer::{ToolHandler, ToolRequest, ToolService};
pub use uri_template::TemplateVars;
#[cfg(feature = "fuzzing")]
pub(crate) use uri_template::UriTemplate;

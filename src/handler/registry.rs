//! The registry: every tool, resource, template, prompt and the completion handler, checked
//! and frozen when the server is built.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::completion::CompletionHandler;
use super::header_rules::{HeaderParam, header_params};
use super::prompt::{PromptDef, PromptHandler};
use super::resource::{CompiledTemplate, ResourceDef, ResourceHandler, ResourceTemplateDef};
use super::state::{StateType, States};
use super::tool::{ToolDef, ToolHandler};
use super::uri_template::UriTemplate;
use crate::Error;
use crate::protocol::{CachePolicy, Prompt, Resource, ResourceTemplate, Tool};

/// A tool ready to serve: its definition, compiled argument validator and mirrored headers.
pub(crate) struct RegisteredTool {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) validator: jsonschema::Validator,
    /// Checks `structuredContent` when the tool declares an `outputSchema`.
    pub(crate) output_validator: Option<Arc<jsonschema::Validator>>,
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) scopes: Vec<String>,
    /// Whether it may run as a task.
    pub(crate) task_support: super::TaskSupport,
}

/// A fixed resource ready to serve.
pub(crate) struct RegisteredResource {
    pub(crate) cache: Option<CachePolicy>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) scopes: Vec<String>,
}

/// A prompt ready to serve.
pub(crate) struct RegisteredPrompt {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Arc<dyn PromptHandler>,
    pub(crate) scopes: Vec<String>,
}

/// Everything registered, immutable once built. Lists keep registration order.
#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) tools: Vec<RegisteredTool>,
    tool_index: HashMap<String, usize>,
    pub(crate) resources: Vec<Resource>,
    resource_handlers: HashMap<String, RegisteredResource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    compiled_templates: Vec<CompiledTemplate>,
    pub(crate) prompts: Vec<RegisteredPrompt>,
    prompt_index: HashMap<String, usize>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
}

/// What the builder collected, before checking.
#[derive(Default)]
pub(crate) struct Definitions {
    pub(crate) tools: Vec<ToolDef>,
    pub(crate) resources: Vec<ResourceDef>,
    pub(crate) templates: Vec<ResourceTemplateDef>,
    pub(crate) prompts: Vec<PromptDef>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
    pub(crate) completion_state: Option<StateType>,
}

impl Definitions {
    /// Fails when a handler takes a [`State`](super::State) of a type nobody registered.
    pub(crate) fn check_states(&self, states: &States) -> Result<(), Error> {
        let needs = self
            .tools
            .iter()
            .map(|d| ("tool", d.tool.name.as_str(), d.state))
            .chain(
                self.resources
                    .iter()
                    .map(|d| ("resource", d.resource.uri.as_str(), d.state)),
            )
            .chain(self.templates.iter().map(|d| {
                (
                    "resource template",
                    d.template.uri_template.as_str(),
                    d.state,
                )
            }))
            .chain(
                self.prompts
                    .iter()
                    .map(|d| ("prompt", d.prompt.name.as_str(), d.state)),
            )
            .chain(std::iter::once((
                "completion",
                "handler",
                self.completion_state,
            )));
        for (kind, name, state) in needs {
            if let Some(ty) = state.filter(|t| !states.has(t)) {
                return Err(Error::invalid_definition(format!(
                    "{kind} {name:?} takes State<{}>, but no state of that type is registered \
                     (ServerBuilder::state)",
                    ty.name()
                )));
            }
        }
        Ok(())
    }
}

/// Tool names: 1 to 128 characters of `[A-Za-z0-9_.-]`.
fn check_tool_name(name: &str) -> Result<(), Error> {
    let ok = (1..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_definition(format!(
            "tool name {name:?} must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '.', '-'"
        )))
    }
}

/// A URI needs a scheme (`scheme:`), per RFC 3986.
pub(crate) fn has_scheme(uri: &str) -> bool {
    match uri.split_once(':') {
        Some((scheme, _)) => {
            let mut c = scheme.chars();
            c.next().is_some_and(|f| f.is_ascii_alphabetic())
                && c.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

impl Registry {
    /// Checks every definition and freezes them.
    pub(crate) fn build(defs: Definitions) -> Result<Self, Error> {
        let mut r = Registry {
            completion: defs.completion,
            ..Default::default()
        };
        for def in defs.tools {
            let name = def.tool.name.clone();
            check_tool_name(&name)?;
            let handler = def.handler.ok_or_else(|| {
                Error::invalid_definition(format!("tool {name:?} has no handler"))
            })?;
            if def.tool.input_schema.get("type") != Some(&Value::from("object")) {
                return Err(Error::invalid_definition(format!(
                    "tool {name:?}: inputSchema must have \"type\": \"object\" at its root"
                )));
            }
            let header_params = header_params(&def.tool.input_schema)
                .map_err(|e| Error::invalid_definition(format!("tool {name:?}: {e}")))?;
            let validator = jsonschema::validator_for(&Value::Object(
                def.tool.input_schema.clone(),
            ))
            .map_err(|e| {
                Error::invalid_definition(format!("tool {name:?}: invalid inputSchema: {e}"))
            })?;
            let output_validator = match &def.tool.output_schema {
                Some(out) => Some(Arc::new(
                    jsonschema::validator_for(&Value::Object(out.clone())).map_err(|e| {
                        Error::invalid_definition(format!(
                            "tool {name:?}: invalid outputSchema: {e}"
                        ))
                    })?,
                )),
                None => None,
            };
            if r.tool_index.insert(name.clone(), r.tools.len()).is_some() {
                return Err(Error::invalid_definition(format!(
                    "duplicate tool name {name:?}"
                )));
            }
            r.tools.push(RegisteredTool {
                tool: def.tool,
                handler,
                validator,
                output_validator,
                header_params,
                scopes: def.scopes,
                task_support: def.task_support,
            });
        }
        for def in defs.resources {
            let uri = def.resource.uri.clone();
            if !has_scheme(&uri) {
                return Err(Error::invalid_definition(format!(
                    "resource URI {uri:?} has no scheme"
                )));
            }
            let handler = def.handler.ok_or_else(|| {
                Error::invalid_definition(format!("resource {uri:?} has no handler"))
            })?;
            let entry = RegisteredResource {
                cache: def.cache,
                handler,
                scopes: def.scopes,
            };
            if r.resource_handlers.insert(uri.clone(), entry).is_some() {
                return Err(Error::invalid_definition(format!(
                    "duplicate resource URI {uri:?}"
                )));
            }
            r.resources.push(def.resource);
        }
        for def in defs.templates {
            let text = def.template.uri_template.clone();
            if r.templates.iter().any(|t| t.uri_template == text) {
                return Err(Error::invalid_definition(format!(
                    "duplicate resource template {text:?}"
                )));
            }
            let matcher = UriTemplate::parse(&text).map_err(Error::invalid_definition)?;
            let handler = def.handler.ok_or_else(|| {
                Error::invalid_definition(format!("resource template {text:?} has no handler"))
            })?;
            r.compiled_templates.push(CompiledTemplate {
                matcher,
                cache: def.cache,
                handler,
                scopes: def.scopes,
            });
            r.templates.push(def.template);
        }
        for def in defs.prompts {
            let name = def.prompt.name.clone();
            if name.is_empty() {
                return Err(Error::invalid_definition("a prompt name must not be empty"));
            }
            let handler = def.handler.ok_or_else(|| {
                Error::invalid_definition(format!("prompt {name:?} has no handler"))
            })?;
            if r.prompt_index
                .insert(name.clone(), r.prompts.len())
                .is_some()
            {
                return Err(Error::invalid_definition(format!(
                    "duplicate prompt name {name:?}"
                )));
            }
            r.prompts.push(RegisteredPrompt {
                prompt: def.prompt,
                handler,
                scopes: def.scopes,
            });
        }
        Ok(r)
    }

    /// The tool called `name`.
    /// Whether any tool may run as a task (the server then offers the Tasks extension).
    pub(crate) fn has_tasks(&self) -> bool {
        self.tools
            .iter()
            .any(|t| t.task_support != super::TaskSupport::Forbidden)
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&RegisteredTool> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// The prompt called `name`.
    pub(crate) fn prompt(&self, name: &str) -> Option<&RegisteredPrompt> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    /// The reader for `uri`: a fixed resource first, then the first matching template.
    pub(crate) fn resource_reader(
        &self,
        uri: &str,
    ) -> Option<(
        Arc<dyn ResourceHandler>,
        Option<CachePolicy>,
        super::TemplateVars,
    )> {
        if let Some(r) = self.resource_handlers.get(uri) {
            return Some((r.handler.clone(), r.cache, Default::default()));
        }
        self.compiled_templates.iter().find_map(|t| {
            t.matcher
                .matches(uri)
                .map(|vars| (t.handler.clone(), t.cache, vars))
        })
    }

    /// Whether `uri` is a registered resource URI or template text (completion references).
    pub(crate) fn knows_resource_reference(&self, uri: &str) -> bool {
        self.resource_handlers.contains_key(uri)
            || self.templates.iter().any(|t| t.uri_template == uri)
    }

    /// The scopes declared on what a request for `method` names (see
    /// [`ScopeRequirements`](super::ScopeRequirements)).
    pub(crate) fn item_scopes(&self, method: &str, name: Option<&str>) -> &[String] {
        use crate::protocol::methods::{PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
        let Some(name) = name else { return &[] };
        match method {
            TOOLS_CALL => self.tool(name).map_or(&[], |t| &t.scopes),
            PROMPTS_GET => self.prompt(name).map_or(&[], |p| &p.scopes),
            RESOURCES_READ => match self.resource_handlers.get(name) {
                Some(r) => &r.scopes,
                None => self
                    .compiled_templates
                    .iter()
                    .find(|t| t.matcher.matches(name).is_some())
                    .map_or(&[], |t| &t.scopes),
            },
            _ => &[],
        }
    }

    /// The scopes of each fixed resource, in list order.
    pub(crate) fn resource_scopes(&self) -> Vec<Vec<String>> {
        self.resources
            .iter()
            .map(|r| {
                self.resource_handlers
                    .get(&r.uri)
                    .map(|h| h.scopes.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The scopes of each template, in list order.
    pub(crate) fn template_scopes(&self) -> Vec<Vec<String>> {
        self.compiled_templates
            .iter()
            .map(|t| t.scopes.clone())
            .collect()
    }

    /// Whether any resource or template is registered.
    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestContext;
    use crate::handler::ToolError;

    fn tool(name: &str) -> ToolDef {
        ToolDef::new(name).raw_handler(|_: RequestContext, _| async { Ok::<_, ToolError>("x") })
    }

    fn build_tools(tools: Vec<ToolDef>) -> Result<Registry, Error> {
        Registry::build(Definitions {
            tools,
            ..Default::default()
        })
    }

    #[test]
    fn rejects_duplicates_and_bad_names() {
        assert!(build_tools(vec![tool("a"), tool("a")]).is_err());
        assert!(build_tools(vec![tool("has space")]).is_err());
        assert!(build_tools(vec![tool("")]).is_err());
        assert!(build_tools(vec![tool(&"x".repeat(129))]).is_err());
        assert!(build_tools(vec![ToolDef::new("nohandler")]).is_err());
        assert!(build_tools(vec![tool("ok.name-1_2")]).is_ok());
    }

    #[test]
    fn rejects_non_object_schema_and_bad_headers() {
        let mut s = crate::protocol::JsonObject::new();
        s.insert("type".into(), "string".into());
        assert!(build_tools(vec![tool("t").input_schema(s)]).is_err());
        let s = serde_json::json!({"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}});
        assert!(build_tools(vec![tool("t").input_schema(s.as_object().unwrap().clone())]).is_err());
    }

    #[test]
    fn schemes() {
        assert!(has_scheme("test://x"));
        assert!(has_scheme("urn:isbn:1"));
        assert!(!has_scheme("no-scheme"));
        assert!(!has_scheme("1x://a"));
    }
}

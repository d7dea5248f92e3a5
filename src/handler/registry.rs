//! The registry: every tool, resource, template, prompt and the completion handler, checked
//! when the server is built and again by every runtime change (see [`super::change`]). A
//! registry is never changed where it is read: a change edits a copy, which replaces it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::completion::CompletionHandler;
use super::header_rules::{HeaderParam, header_params};
use super::named::{Keyed, Named};
use super::plain_schema::PlainSchema;
use super::prompt::{PromptDef, PromptHandler};
use super::resource::{CompiledTemplate, ResourceDef, ResourceHandler, ResourceTemplateDef};
use super::state::{StateType, States};
use super::tool::{DirectCall, ToolDef};
use super::tool_layer::ToolHandler;
use super::uri_template::UriTemplate;
use crate::Error;
use crate::protocol::{CachePolicy, Prompt, Resource, ResourceTemplate, Skill, Tool};
use crate::skills::SkillDef;

/// A tool ready to serve: its definition, compiled argument validator and mirrored headers.
pub(crate) struct RegisteredTool {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) validator: jsonschema::Validator,
    /// Checks `structuredContent` when the tool declares an `outputSchema`.
    pub(crate) output_validator: Option<Arc<jsonschema::Validator>>,
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) scopes: Arc<[String]>,
    /// Whether it may run as a task.
    pub(crate) task_support: super::TaskSupport,
    /// Whether a call with an idempotency key runs at most once per key.
    pub(crate) idempotency_keys: bool,
    /// How a call whose arguments the plain schema shows valid runs without a `Value`.
    pub(crate) direct: Option<Direct>,
}

/// A typed handler under a plain input schema, for the calls that need none of what the
/// arguments as a `Value` serve (mirrored headers, an idempotency key's digest, a task's
/// record) and whose arguments the schema shows valid on their text: they go from that
/// text straight to the handler's type.
pub(crate) struct Direct {
    pub(crate) schema: PlainSchema,
    pub(crate) call: Arc<dyn DirectCall>,
}

/// A fixed resource ready to serve.
pub(crate) struct RegisteredResource {
    pub(crate) resource: Resource,
    pub(crate) cache: Option<CachePolicy>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) scopes: Arc<[String]>,
}

/// A resource template ready to serve.
pub(crate) struct RegisteredTemplate {
    pub(crate) template: ResourceTemplate,
    pub(crate) compiled: CompiledTemplate,
}

/// A prompt ready to serve.
pub(crate) struct RegisteredPrompt {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Arc<dyn PromptHandler>,
    pub(crate) scopes: Arc<[String]>,
}

/// A skill ready to serve: its entry (its files are fixed resources of the registry).
pub(crate) struct RegisteredSkill {
    pub(crate) entry: Skill,
}

/// Everything registered. Lists keep registration order; a replaced item keeps its place.
/// Cheap to clone (the items are shared).
#[derive(Default, Clone)]
pub(crate) struct Registry {
    pub(crate) tools: Named<Arc<RegisteredTool>>,
    pub(crate) resources: Named<Arc<RegisteredResource>>,
    pub(crate) templates: Named<Arc<RegisteredTemplate>>,
    pub(crate) prompts: Named<Arc<RegisteredPrompt>>,
    pub(crate) skills: Named<Arc<RegisteredSkill>>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
}

/// What the builder collected, before checking.
#[derive(Default)]
pub(crate) struct Definitions {
    pub(crate) tools: Vec<ToolDef>,
    pub(crate) resources: Vec<ResourceDef>,
    pub(crate) templates: Vec<ResourceTemplateDef>,
    pub(crate) prompts: Vec<PromptDef>,
    pub(crate) skills: Vec<SkillDef>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
    pub(crate) completion_state: Option<StateType>,
    /// The first definition that could not even be read (a skill directory).
    pub(crate) unreadable: Option<Error>,
}

/// Fails when the handler of the `kind` called `name` takes a [`State`](super::State) of a
/// type nobody registered.
pub(crate) fn check_state(
    kind: &str,
    name: &str,
    state: Option<StateType>,
    states: &States,
) -> Result<(), Error> {
    match state.filter(|t| !states.has(t)) {
        Some(ty) => Err(Error::invalid_definition(format!(
            "{kind} {name:?} takes State<{}>, but no state of that type is registered \
             (ServerBuilder::state)",
            ty.name()
        ))),
        None => Ok(()),
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

/// Checks a tool definition, puts its handler behind its layers and time limit
/// (`tool_timeout`, the server's default), and compiles its validators: every tool, given to
/// the builder or added by a runtime change, comes through here.
pub(crate) fn compile_tool(
    mut def: ToolDef,
    states: &States,
    tool_timeout: Option<Duration>,
) -> Result<RegisteredTool, Error> {
    def.finish_layers(tool_timeout);
    let name = def.tool.name.as_str();
    check_tool_name(name)?;
    check_state("tool", name, def.state, states)?;
    let handler = def
        .handler
        .ok_or_else(|| Error::invalid_definition(format!("tool {name:?} has no handler")))?;
    if def.tool.input_schema.get("type") != Some(&Value::from("object")) {
        return Err(Error::invalid_definition(format!(
            "tool {name:?}: inputSchema must have \"type\": \"object\" at its root"
        )));
    }
    let header_params = header_params(&def.tool.input_schema)
        .map_err(|e| Error::invalid_definition(format!("tool {name:?}: {e}")))?;
    let validator = jsonschema::validator_for(&Value::Object(def.tool.input_schema.clone()))
        .map_err(|e| {
            Error::invalid_definition(format!("tool {name:?}: invalid inputSchema: {e}"))
        })?;
    let output_validator = match &def.tool.output_schema {
        Some(out) => Some(Arc::new(
            jsonschema::validator_for(&Value::Object(out.clone())).map_err(|e| {
                Error::invalid_definition(format!("tool {name:?}: invalid outputSchema: {e}"))
            })?,
        )),
        None => None,
    };
    let direct = def
        .direct
        .filter(|_| {
            header_params.is_empty()
                && !def.idempotency_keys
                && def.task_support == super::TaskSupport::Forbidden
        })
        .and_then(|call| {
            let schema = PlainSchema::of(&def.tool.input_schema)?;
            Some(Direct { schema, call })
        });
    Ok(RegisteredTool {
        direct,
        tool: def.tool,
        handler,
        validator,
        output_validator,
        header_params,
        scopes: def.scopes.into(),
        task_support: def.task_support,
        idempotency_keys: def.idempotency_keys,
    })
}

/// Checks a fixed resource definition.
pub(crate) fn compile_resource(
    def: ResourceDef,
    states: &States,
) -> Result<RegisteredResource, Error> {
    let uri = def.resource.uri.as_str();
    if !has_scheme(uri) {
        return Err(Error::invalid_definition(format!(
            "resource URI {uri:?} has no scheme"
        )));
    }
    check_state("resource", uri, def.state, states)?;
    let handler = def
        .handler
        .ok_or_else(|| Error::invalid_definition(format!("resource {uri:?} has no handler")))?;
    Ok(RegisteredResource {
        resource: def.resource,
        cache: def.cache,
        handler,
        scopes: def.scopes.into(),
    })
}

/// Checks a resource template definition and compiles its matcher.
pub(crate) fn compile_template(
    def: ResourceTemplateDef,
    states: &States,
) -> Result<RegisteredTemplate, Error> {
    let text = def.template.uri_template.as_str();
    check_state("resource template", text, def.state, states)?;
    let matcher = UriTemplate::parse(text).map_err(Error::invalid_definition)?;
    let handler = def.handler.ok_or_else(|| {
        Error::invalid_definition(format!("resource template {text:?} has no handler"))
    })?;
    Ok(RegisteredTemplate {
        template: def.template,
        compiled: CompiledTemplate {
            matcher,
            cache: def.cache,
            handler,
            scopes: def.scopes.into(),
        },
    })
}

/// Checks a prompt definition.
pub(crate) fn compile_prompt(def: PromptDef, states: &States) -> Result<RegisteredPrompt, Error> {
    let name = def.prompt.name.as_str();
    if name.is_empty() {
        return Err(Error::invalid_definition("a prompt name must not be empty"));
    }
    check_state("prompt", name, def.state, states)?;
    let handler = def
        .handler
        .ok_or_else(|| Error::invalid_definition(format!("prompt {name:?} has no handler")))?;
    Ok(RegisteredPrompt {
        prompt: def.prompt,
        handler,
        scopes: def.scopes.into(),
    })
}

impl Keyed for RegisteredTool {
    const KEY: &'static str = "tool name";
    const NOUN: &'static str = "tool";
    fn key(&self) -> &str {
        &self.tool.name
    }
}

impl Keyed for RegisteredPrompt {
    const KEY: &'static str = "prompt name";
    const NOUN: &'static str = "prompt";
    fn key(&self) -> &str {
        &self.prompt.name
    }
}

impl Keyed for RegisteredResource {
    const KEY: &'static str = "resource URI";
    const NOUN: &'static str = "resource";
    fn key(&self) -> &str {
        &self.resource.uri
    }
}

impl Keyed for RegisteredSkill {
    const KEY: &'static str = "skill URI";
    const NOUN: &'static str = "skill";
    fn key(&self) -> &str {
        &self.entry.uri
    }
}

impl Keyed for RegisteredTemplate {
    const KEY: &'static str = "resource template";
    const NOUN: &'static str = "resource template";
    fn key(&self) -> &str {
        &self.template.uri_template
    }
}

impl Registry {
    /// Checks every definition (in registration order, the first problem wins).
    pub(crate) fn build(
        defs: Definitions,
        states: &States,
        tool_timeout: Option<Duration>,
    ) -> Result<Self, Error> {
        if let Some(e) = defs.unreadable {
            return Err(e);
        }
        check_state("completion", "handler", defs.completion_state, states)?;
        let mut r = Registry {
            completion: defs.completion,
            ..Default::default()
        };
        for def in defs.tools {
            r.tools.add(compile_tool(def, states, tool_timeout)?)?;
        }
        for def in defs.resources {
            r.resources.add(compile_resource(def, states)?)?;
        }
        for def in defs.templates {
            r.templates.add(compile_template(def, states)?)?;
        }
        for def in defs.prompts {
            r.prompts.add(compile_prompt(def, states)?)?;
        }
        for def in defs.skills {
            r.add_skill(def, states, false)?;
        }
        Ok(r)
    }

    /// Adds the skill `def` and a fixed resource per file; with `replace`, in place of the
    /// skill at its URI (and that skill's files), if there is one.
    pub(crate) fn add_skill(
        &mut self,
        def: SkillDef,
        states: &States,
        replace: bool,
    ) -> Result<(), Error> {
        let compiled = def.compile()?;
        if replace && self.skills.contains(&compiled.entry.uri) {
            self.remove_skill_files(&compiled.entry.uri)?;
        }
        for file in compiled.files {
            self.resources.add(compile_resource(file, states)?)?;
        }
        let skill = RegisteredSkill {
            entry: compiled.entry,
        };
        if replace {
            self.skills.replace(skill);
            Ok(())
        } else {
            self.skills.add(skill)
        }
    }

    /// Removes the skill whose `SKILL.md` is `uri`, and its files.
    pub(crate) fn remove_skill(&mut self, uri: &str) -> Result<(), Error> {
        self.remove_skill_files(uri)?;
        self.skills.take(uri)
    }

    fn remove_skill_files(&mut self, uri: &str) -> Result<(), Error> {
        let skill = self
            .skills
            .get(uri)
            .cloned()
            .ok_or_else(|| Error::invalid_definition(format!("no skill {uri:?} is served")))?;
        for file in &skill.entry.resources {
            self.resources.take(&file.uri)?;
        }
        Ok(())
    }

    /// The first tool that may run as a task (with one, the server offers the Tasks
    /// extension).
    pub(crate) fn task_tool(&self) -> Option<&Arc<RegisteredTool>> {
        self.tools
            .iter()
            .find(|t| t.task_support != super::TaskSupport::Forbidden)
    }

    /// The tool called `name`.
    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    /// The prompt called `name`.
    pub(crate) fn prompt(&self, name: &str) -> Option<&Arc<RegisteredPrompt>> {
        self.prompts.get(name)
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
        if let Some(r) = self.resources.get(uri) {
            return Some((r.handler.clone(), r.cache, Default::default()));
        }
        self.templates.iter().find_map(|t| {
            let t = &t.compiled;
            t.matcher
                .matches(uri)
                .map(|vars| (t.handler.clone(), t.cache, vars))
        })
    }

    /// Whether `uri` is a registered resource URI or template text (completion references).
    pub(crate) fn knows_resource_reference(&self, uri: &str) -> bool {
        self.resources.contains(uri) || self.templates.contains(uri)
    }

    /// The scopes declared on what a request for `method` names (see
    /// [`ScopeRequirements`](super::ScopeRequirements)); `None` when it names nothing
    /// registered or the method names nothing.
    pub(crate) fn item_scopes(&self, method: &str, name: Option<&str>) -> Option<&Arc<[String]>> {
        use crate::protocol::methods::{PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
        let name = name?;
        match method {
            TOOLS_CALL => self.tool(name).map(|t| &t.scopes),
            PROMPTS_GET => self.prompt(name).map(|p| &p.scopes),
            RESOURCES_READ => match self.resources.get(name) {
                Some(r) => Some(&r.scopes),
                None => self
                    .templates
                    .iter()
                    .find(|t| t.compiled.matcher.matches(name).is_some())
                    .map(|t| &t.compiled.scopes),
            },
            _ => None,
        }
    }

    /// The scopes of each fixed resource, in list order.
    pub(crate) fn resource_scopes(&self) -> Vec<Arc<[String]>> {
        self.resources.iter().map(|r| r.scopes.clone()).collect()
    }

    /// The scopes of each template, in list order.
    pub(crate) fn template_scopes(&self) -> Vec<Arc<[String]>> {
        self.templates
            .iter()
            .map(|t| t.compiled.scopes.clone())
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
    use crate::handler::HandlerError;

    fn tool(name: &str) -> ToolDef {
        ToolDef::new(name).raw_handler(|_: RequestContext, _| async { Ok::<_, HandlerError>("x") })
    }

    fn build_tools(tools: Vec<ToolDef>) -> Result<Registry, Error> {
        Registry::build(
            Definitions {
                tools,
                ..Default::default()
            },
            &States::default(),
            None,
        )
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
    fn typed_tools_under_a_plain_schema_read_their_arguments_from_the_text() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct Args {
            #[allow(dead_code)]
            text: String,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct Nested {
            #[allow(dead_code)]
            inner: Args,
        }
        let typed = |name: &str| {
            ToolDef::new(name)
                .handler(|_: RequestContext, _: Args| async { Ok::<_, HandlerError>("x") })
        };
        let registry = build_tools(vec![
            typed("plain"),
            typed("layered").layer(tower::layer::util::Identity::new()),
            typed("timed").timeout(std::time::Duration::from_secs(1)),
            typed("keyed").idempotency_keys(true),
            typed("task").task_support(super::super::TaskSupport::Optional),
            tool("raw"),
            ToolDef::new("nested")
                .handler(|_: RequestContext, _: Nested| async { Ok::<_, HandlerError>("x") }),
        ])
        .unwrap();
        let direct: Vec<&str> = [
            "plain", "layered", "timed", "keyed", "task", "raw", "nested",
        ]
        .into_iter()
        .filter(|n| registry.tool(n).unwrap().direct.is_some())
        .collect();
        assert_eq!(direct, ["plain"]);
    }

    #[test]
    fn schemes() {
        assert!(has_scheme("test://x"));
        assert!(has_scheme("urn:isbn:1"));
        assert!(!has_scheme("no-scheme"));
        assert!(!has_scheme("1x://a"));
    }
}

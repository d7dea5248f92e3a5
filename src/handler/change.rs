//! Runtime changes to a [`Registry`]: add, replace or remove one definition, with the checks
//! the builder applies. A batch of them edits a copy; the first refused one discards it.

use std::sync::Arc;
use std::time::Duration;

use super::registry::{
    Registry, compile_prompt, compile_resource, compile_template, compile_tool, duplicate,
};
use super::state::States;
use super::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
use crate::Error;

/// One runtime change.
pub(crate) enum Edit {
    AddTool(ToolDef),
    ReplaceTool(ToolDef),
    RemoveTool(String),
    AddPrompt(PromptDef),
    ReplacePrompt(PromptDef),
    RemovePrompt(String),
    AddResource(ResourceDef),
    ReplaceResource(ResourceDef),
    RemoveResource(String),
    AddTemplate(ResourceTemplateDef),
    ReplaceTemplate(ResourceTemplateDef),
    RemoveTemplate(String),
}

/// Which lists a batch of edits touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Touched {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    /// Resources or resource templates.
    pub(crate) resources: bool,
}

fn missing(kind: &str, name: &str) -> Error {
    Error::invalid_definition(format!("cannot remove {kind} {name:?}: no such {kind}"))
}

impl Registry {
    /// Applies `edit` to this registry (a copy of the serving one), checking it as the
    /// builder would; records the list it touched in `touched`.
    pub(crate) fn edit(
        &mut self,
        edit: Edit,
        states: &States,
        tool_timeout: Option<Duration>,
        touched: &mut Touched,
    ) -> Result<(), Error> {
        match edit {
            Edit::AddTool(def) => {
                let tool = compile_tool(def, states, tool_timeout)?;
                let name = tool.tool.name.clone();
                self.tools
                    .insert(name.clone(), Arc::new(tool))
                    .map_err(|_| duplicate("tool name", &name))?;
                touched.tools = true;
            }
            Edit::ReplaceTool(def) => {
                let tool = compile_tool(def, states, tool_timeout)?;
                self.tools.put(tool.tool.name.clone(), Arc::new(tool));
                touched.tools = true;
            }
            Edit::RemoveTool(name) => {
                self.tools
                    .remove(&name)
                    .ok_or_else(|| missing("tool", &name))?;
                touched.tools = true;
            }
            Edit::AddPrompt(def) => {
                let prompt = compile_prompt(def, states)?;
                let name = prompt.prompt.name.clone();
                self.prompts
                    .insert(name.clone(), Arc::new(prompt))
                    .map_err(|_| duplicate("prompt name", &name))?;
                touched.prompts = true;
            }
            Edit::ReplacePrompt(def) => {
                let prompt = compile_prompt(def, states)?;
                self.prompts
                    .put(prompt.prompt.name.clone(), Arc::new(prompt));
                touched.prompts = true;
            }
            Edit::RemovePrompt(name) => {
                self.prompts
                    .remove(&name)
                    .ok_or_else(|| missing("prompt", &name))?;
                touched.prompts = true;
            }
            Edit::AddResource(def) => {
                let resource = compile_resource(def, states)?;
                let uri = resource.resource.uri.clone();
                self.resources
                    .insert(uri.clone(), Arc::new(resource))
                    .map_err(|_| duplicate("resource URI", &uri))?;
                touched.resources = true;
            }
            Edit::ReplaceResource(def) => {
                let resource = compile_resource(def, states)?;
                self.resources
                    .put(resource.resource.uri.clone(), Arc::new(resource));
                touched.resources = true;
            }
            Edit::RemoveResource(uri) => {
                self.resources
                    .remove(&uri)
                    .ok_or_else(|| missing("resource", &uri))?;
                touched.resources = true;
            }
            Edit::AddTemplate(def) => {
                let template = compile_template(def, states)?;
                let text = template.template.uri_template.clone();
                self.templates
                    .insert(text.clone(), Arc::new(template))
                    .map_err(|_| duplicate("resource template", &text))?;
                touched.resources = true;
            }
            Edit::ReplaceTemplate(def) => {
                let template = compile_template(def, states)?;
                self.templates
                    .put(template.template.uri_template.clone(), Arc::new(template));
                touched.resources = true;
            }
            Edit::RemoveTemplate(text) => {
                self.templates
                    .remove(&text)
                    .ok_or_else(|| missing("resource template", &text))?;
                touched.resources = true;
            }
        }
        Ok(())
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

    fn names(r: &Registry) -> Vec<&str> {
        r.tools.iter().map(|t| t.tool.name.as_str()).collect()
    }

    #[test]
    fn edits_keep_order_and_refuse_what_the_builder_refuses() {
        let states = States::default();
        let mut r = Registry::default();
        let mut touched = Touched::default();
        for n in ["a", "b", "c"] {
            r.edit(Edit::AddTool(tool(n)), &states, None, &mut touched)
                .unwrap();
        }
        r.edit(Edit::ReplaceTool(tool("b")), &states, None, &mut touched)
            .unwrap();
        r.edit(Edit::RemoveTool("a".into()), &states, None, &mut touched)
            .unwrap();
        assert_eq!(names(&r), ["b", "c"]);
        assert_eq!(
            touched,
            Touched {
                tools: true,
                ..Default::default()
            }
        );
        let refused = [
            Edit::AddTool(tool("b")),
            Edit::AddTool(tool("has space")),
            Edit::ReplaceTool(ToolDef::new("nohandler")),
            Edit::RemoveTool("a".into()),
            Edit::RemovePrompt("p".into()),
            Edit::AddResource(ResourceDef::new("no-scheme", "x")),
        ];
        for edit in refused {
            let e = r.edit(edit, &states, None, &mut touched).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidDefinition, "{e}");
        }
        assert_eq!(names(&r), ["b", "c"]);
    }
}

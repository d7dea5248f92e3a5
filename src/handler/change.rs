//! Runtime changes to a [`Registry`]: add, replace or remove one definition, with the checks
//! the builder applies. A batch of them edits a copy; the first refused one discards it.

use std::time::Duration;

use super::registry::{Registry, compile_prompt, compile_resource, compile_template, compile_tool};
use super::state::States;
use super::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
use crate::Error;
use crate::skills::SkillDef;

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
    AddSkill(SkillDef),
    ReplaceSkill(SkillDef),
    RemoveSkill(String),
}

/// Which lists a batch of edits touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Touched {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    /// Resources or resource templates.
    pub(crate) resources: bool,
    /// Skills (whose files are resources: a skill's edit touches both).
    pub(crate) skills: bool,
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
        use Edit::*;
        let (tools, prompts, resources) = (
            &mut touched.tools,
            &mut touched.prompts,
            &mut touched.resources,
        );
        let list = match edit {
            AddTool(def) => self
                .tools
                .add(compile_tool(def, states, tool_timeout)?)
                .map(|()| tools)?,
            ReplaceTool(def) => {
                self.tools.replace(compile_tool(def, states, tool_timeout)?);
                tools
            }
            RemoveTool(name) => self.tools.take(&name).map(|()| tools)?,
            AddPrompt(def) => self
                .prompts
                .add(compile_prompt(def, states)?)
                .map(|()| prompts)?,
            ReplacePrompt(def) => {
                self.prompts.replace(compile_prompt(def, states)?);
                prompts
            }
            RemovePrompt(name) => self.prompts.take(&name).map(|()| prompts)?,
            AddResource(def) => self
                .resources
                .add(compile_resource(def, states)?)
                .map(|()| resources)?,
            ReplaceResource(def) => {
                self.resources.replace(compile_resource(def, states)?);
                resources
            }
            RemoveResource(uri) => self.resources.take(&uri).map(|()| resources)?,
            AddTemplate(def) => self
                .templates
                .add(compile_template(def, states)?)
                .map(|()| resources)?,
            ReplaceTemplate(def) => {
                self.templates.replace(compile_template(def, states)?);
                resources
            }
            RemoveTemplate(text) => self.templates.take(&text).map(|()| resources)?,
            // A skill's files are resources: its edit touches both lists.
            AddSkill(def) => {
                self.add_skill(def, states, false)?;
                touched.skills = true;
                resources
            }
            ReplaceSkill(def) => {
                self.add_skill(def, states, true)?;
                touched.skills = true;
                resources
            }
            RemoveSkill(uri) => {
                self.remove_skill(&uri)?;
                touched.skills = true;
                resources
            }
        };
        *list = true;
        Ok(())
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

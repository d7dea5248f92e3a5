//! The catalog: the tools, prompts, resources and resource templates a server serves, as one
//! versioned snapshot (registry + pre-encoded lists + fingerprints) that a runtime change
//! replaces whole.
//!
//! Readers take the serving snapshot with one atomic load (`arc-swap`) and never wait; a
//! change copies the registry (its items are shared `Arc`s), applies its edits with the
//! builder's checks, encodes again only the lists it touched, and swaps the copy in. A
//! refused change swaps nothing. Changes are serialized among themselves, never with readers.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;

use tokio::sync::watch;

use super::advertised::Advertised;
use super::lists::{ListSettings, Lists};
use crate::Error;
use crate::backends::bus::Delivery;
use crate::handler::change::{Edit, Touched};
use crate::handler::registry::Registry;
use crate::handler::state::States;
use crate::handler::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
use crate::notify::{ChangeEvent, ListFingerprints, Notifier};
use crate::observability::RequestObserver;
use crate::skills::SkillDef;

/// One version of everything the server serves.
pub(crate) struct Snapshot {
    pub(crate) registry: Registry,
    pub(crate) lists: Lists,
    pub(crate) fingerprints: Arc<ListFingerprints>,
    pub(crate) version: u64,
}

impl Snapshot {
    /// The first version: `registry` and its lists encoded.
    pub(crate) fn first(registry: Registry, settings: &ListSettings) -> Self {
        let lists = Lists::build(&registry, settings);
        Snapshot {
            fingerprints: Arc::new(lists.fingerprints()),
            registry,
            lists,
            version: 1,
        }
    }
}

/// Who follows the catalog's changes: the replica's streams (through the fingerprints they
/// watch), the request metrics (labelled by tool and prompt name), the handlers' states
/// (checked by every change), and the bus an applied change is announced on.
pub(crate) struct Followers {
    /// The fingerprints the replica's listen streams watch.
    pub(crate) fingerprints: watch::Sender<Arc<ListFingerprints>>,
    /// The request metrics, relabelled when tool or prompt names change.
    pub(crate) observer: RequestObserver,
    /// The states handlers take, which a new handler's must be among.
    pub(crate) states: Arc<States>,
    /// The bus an applied change is announced on.
    pub(crate) notifier: Notifier,
}

/// The serving snapshot and what a change needs to make the next one.
pub(crate) struct Serving {
    current: ArcSwap<Snapshot>,
    /// Held by a change from reading the current snapshot to swapping in the next.
    writer: Mutex<()>,
    settings: ListSettings,
    advertised: Advertised,
    /// [`ServerBuilder::tool_timeout`](crate::ServerBuilder::tool_timeout): a tool a change
    /// adds gets the layers a tool given to the builder gets.
    tool_timeout: Option<Duration>,
    followers: Followers,
}

impl Serving {
    /// The catalog serving `first`, whose changes `followers` follow.
    pub(crate) fn new(
        first: Snapshot,
        settings: ListSettings,
        advertised: Advertised,
        tool_timeout: Option<Duration>,
        followers: Followers,
    ) -> Self {
        Serving {
            current: ArcSwap::from_pointee(first),
            writer: Mutex::new(()),
            settings,
            advertised,
            tool_timeout,
            followers,
        }
    }

    /// What the server advertises (fixed at build: a change may not add a capability).
    pub(crate) fn advertised(&self) -> Advertised {
        self.advertised
    }

    /// The caching fields of the lists (and of `skills/get`).
    pub(crate) fn list_cache(&self) -> crate::protocol::CachePolicy {
        self.settings.cache
    }

    /// The serving snapshot, for the length of a request's dispatch.
    pub(crate) fn load(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.current.load()
    }

    /// Applies `edits` as one change, or none of them.
    fn apply(&self, edits: Vec<Edit>) -> Result<Arc<Snapshot>, Error> {
        let Followers {
            fingerprints,
            observer,
            states,
            ..
        } = &self.followers;
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let old = self.current.load_full();
        let mut registry = old.registry.clone();
        let mut touched = Touched::default();
        for edit in edits {
            registry.edit(edit, states, self.tool_timeout, &mut touched)?;
        }
        self.check_advertised(&registry)?;
        let lists = old.lists.rebuild(&registry, touched, &self.settings);
        let next = Arc::new(Snapshot {
            fingerprints: Arc::new(lists.fingerprints()),
            registry,
            lists,
            version: old.version + 1,
        });
        self.current.store(next.clone());
        // Still under the writer lock: streams and metrics see the versions in order.
        fingerprints.send_replace(next.fingerprints.clone());
        if touched.tools || touched.prompts {
            let reg = &next.registry;
            observer.rename(
                reg.tools.iter().map(|t| t.tool.name.as_str()),
                reg.prompts.iter().map(|p| p.prompt.name.as_str()),
            );
        }
        Ok(next)
    }

    fn check_advertised(&self, registry: &Registry) -> Result<(), Error> {
        let a = self.advertised;
        let refuse = |kind: &str, name: &str, setter: &str| {
            Err(Error::invalid_definition(format!(
                "{kind} {name:?}: the server was built without the {setter} capability \
                 (ServerBuilder::advertise_{setter})"
            )))
        };
        if let Some(s) = registry.skills.first().filter(|_| !a.skills) {
            return refuse("skill", &s.entry.uri, "skills");
        }
        if let Some(t) = registry.tools.first().filter(|_| !a.tools) {
            return refuse("tool", &t.tool.name, "tools");
        }
        if let Some(p) = registry.prompts.first().filter(|_| !a.prompts) {
            return refuse("prompt", &p.prompt.name, "prompts");
        }
        if !a.resources {
            if let Some(r) = registry.resources.first() {
                return refuse("resource", &r.resource.uri, "resources");
            }
            if let Some(t) = registry.templates.first() {
                return refuse("resource template", &t.template.uri_template, "resources");
            }
        }
        match registry.task_tool() {
            Some(t) if !a.tasks => Err(Error::invalid_definition(format!(
                "tool {:?} may run as a task, but the server was built without task-capable \
                 tools, so it does not offer the Tasks extension",
                t.tool.name
            ))),
            _ => Ok(()),
        }
    }
}

/// The handle to change what a running server serves: add, replace and remove tools,
/// prompts, resources, resource templates and skills. Cheap to clone. Get it from
/// [`Server::catalog`](crate::Server::catalog).
///
/// Each [`change`](Self::change) is a batch checked as [`ServerBuilder::build`] checks
/// definitions (names, schemas, `x-mcp-header` rules, duplicates, registered state types)
/// and applied whole or not at all: it becomes one new version of the lists, encoded once.
/// Requests read the version current when they arrive: a list page never mixes versions, a
/// cursor from another version of its list gets `-32602`, a call to a removed tool is an
/// unknown tool, and a call already running finishes with the definition it started with.
///
/// A change wakes this replica's listen and legacy GET streams that follow a list it
/// changed; [`Applied::announce`] tells the other replicas (see the user guide's
/// `docs/runtime-tools.md` for the pattern that makes every replica converge).
///
/// ```
/// # async fn demo() -> Result<(), stateless_mcp::Error> {
/// use stateless_mcp::{HandlerError, RequestContext, Server, ToolDef};
///
/// let server = Server::builder().advertise_tools().build()?;
/// let catalog = server.catalog();
/// let applied = catalog
///     .change()
///     .add_tool(ToolDef::new("ping").raw_handler(|_: RequestContext, _| async {
///         Ok::<_, HandlerError>("pong")
///     }))
///     .apply()?;
/// applied.announce().await?;
/// assert_eq!(catalog.tool_names(), ["ping"]);
/// # Ok(()) }
/// ```
///
/// [`ServerBuilder::build`]: crate::ServerBuilder::build
#[derive(Clone)]
pub struct Catalog {
    serving: Arc<Serving>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("version", &self.version())
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// The handle of `server`'s catalog.
    pub(super) fn of(serving: Arc<Serving>) -> Self {
        Catalog { serving }
    }

    /// Starts a batch of changes.
    pub fn change(&self) -> CatalogChange {
        CatalogChange {
            serving: self.serving.clone(),
            edits: Vec::new(),
        }
    }

    /// The serving version: 1 when built, one more after each applied change.
    pub fn version(&self) -> u64 {
        self.serving.load().version
    }

    /// Names of the tools now served, in list order.
    pub fn tool_names(&self) -> Vec<String> {
        let now = self.serving.load();
        now.registry
            .tools
            .iter()
            .map(|t| t.tool.name.clone())
            .collect()
    }

    /// Names of the prompts now served, in list order.
    pub fn prompt_names(&self) -> Vec<String> {
        let now = self.serving.load();
        let prompts = now.registry.prompts.iter();
        prompts.map(|p| p.prompt.name.clone()).collect()
    }

    /// URIs of the fixed resources now served, in list order.
    pub fn resource_uris(&self) -> Vec<String> {
        let now = self.serving.load();
        let resources = now.registry.resources.iter();
        resources.map(|r| r.resource.uri.clone()).collect()
    }

    /// URI templates of the resource templates now served, in list order.
    pub fn resource_templates(&self) -> Vec<String> {
        let now = self.serving.load();
        let templates = now.registry.templates.iter();
        templates.map(|t| t.template.uri_template.clone()).collect()
    }

    /// URIs of the `SKILL.md` of the skills now served, in list order.
    pub fn skill_uris(&self) -> Vec<String> {
        let now = self.serving.load();
        let skills = now.registry.skills.iter();
        skills.map(|s| s.entry.uri.clone()).collect()
    }

    /// Whether `delivery` (from [`Notifier::subscribe`](crate::notify::Notifier::subscribe))
    /// says this replica may be behind: another replica announced lists that differ from
    /// these, or events were missed. A replica whose catalog follows a shared source reads
    /// the source again then.
    pub fn is_behind(&self, delivery: &Delivery) -> bool {
        match delivery {
            Delivery::Resync => true,
            Delivery::Event(event) => match &**event {
                ChangeEvent::ServerFingerprint(theirs) => {
                    *theirs != *self.serving.load().fingerprints
                }
                _ => false,
            },
        }
    }
}

/// A batch of changes to a [`Catalog`], applied by [`apply`](Self::apply) as one version.
/// The edits apply in the order given; the first refused one refuses the batch.
#[must_use = "a change does nothing until it is applied"]
pub struct CatalogChange {
    serving: Arc<Serving>,
    edits: Vec<Edit>,
}

impl std::fmt::Debug for CatalogChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogChange")
            .field("edits", &self.edits.len())
            .finish_non_exhaustive()
    }
}

impl CatalogChange {
    fn with(mut self, edit: Edit) -> Self {
        self.edits.push(edit);
        self
    }

    /// Adds a tool; refused if one has its name.
    pub fn add_tool(self, tool: ToolDef) -> Self {
        self.with(Edit::AddTool(tool))
    }

    /// Replaces the tool of the same name where it stands in the list, or adds it.
    pub fn replace_tool(self, tool: ToolDef) -> Self {
        self.with(Edit::ReplaceTool(tool))
    }

    /// Removes the tool called `name`; refused if there is none.
    pub fn remove_tool(self, name: impl Into<String>) -> Self {
        self.with(Edit::RemoveTool(name.into()))
    }

    /// Adds a prompt; refused if one has its name.
    pub fn add_prompt(self, prompt: PromptDef) -> Self {
        self.with(Edit::AddPrompt(prompt))
    }

    /// Replaces the prompt of the same name where it stands, or adds it.
    pub fn replace_prompt(self, prompt: PromptDef) -> Self {
        self.with(Edit::ReplacePrompt(prompt))
    }

    /// Removes the prompt called `name`; refused if there is none.
    pub fn remove_prompt(self, name: impl Into<String>) -> Self {
        self.with(Edit::RemovePrompt(name.into()))
    }

    /// Adds a fixed resource; refused if one has its URI.
    pub fn add_resource(self, resource: ResourceDef) -> Self {
        self.with(Edit::AddResource(resource))
    }

    /// Replaces the resource with the same URI where it stands, or adds it.
    pub fn replace_resource(self, resource: ResourceDef) -> Self {
        self.with(Edit::ReplaceResource(resource))
    }

    /// Removes the resource `uri`; refused if there is none.
    pub fn remove_resource(self, uri: impl Into<String>) -> Self {
        self.with(Edit::RemoveResource(uri.into()))
    }

    /// Adds a resource template; refused if one has the same URI template.
    pub fn add_resource_template(self, template: ResourceTemplateDef) -> Self {
        self.with(Edit::AddTemplate(template))
    }

    /// Replaces the resource template with the same URI template, or adds it.
    pub fn replace_resource_template(self, template: ResourceTemplateDef) -> Self {
        self.with(Edit::ReplaceTemplate(template))
    }

    /// Removes the resource template `uri_template`; refused if there is none.
    pub fn remove_resource_template(self, uri_template: impl Into<String>) -> Self {
        self.with(Edit::RemoveTemplate(uri_template.into()))
    }

    /// Adds a skill and its files (see [`SkillDef`]); refused if a skill or a resource has
    /// one of their URIs.
    pub fn add_skill(self, skill: SkillDef) -> Self {
        self.with(Edit::AddSkill(skill))
    }

    /// Replaces the skill with the same `SKILL.md` URI (its files too), or adds it.
    pub fn replace_skill(self, skill: SkillDef) -> Self {
        self.with(Edit::ReplaceSkill(skill))
    }

    /// Removes the skill whose `SKILL.md` is at `uri`, and its files; refused if there is
    /// none.
    pub fn remove_skill(self, uri: impl Into<String>) -> Self {
        self.with(Edit::RemoveSkill(uri.into()))
    }

    /// Checks and applies the batch as one new version, and wakes this replica's streams
    /// that follow a list whose content changed. An error (kind
    /// [`InvalidDefinition`](crate::ErrorKind::InvalidDefinition)) names the refused item and
    /// leaves the catalog as it was.
    pub fn apply(self) -> Result<Applied, Error> {
        let next = self.serving.apply(self.edits)?;
        Ok(Applied {
            notifier: self.serving.followers.notifier.clone(),
            version: next.version,
            fingerprints: next.fingerprints.clone(),
        })
    }
}

/// An applied change: its version, and the announcement other replicas need (a server alone
/// on its bus can drop it).
#[derive(Debug)]
pub struct Applied {
    notifier: Notifier,
    version: u64,
    fingerprints: Arc<ListFingerprints>,
}

impl Applied {
    /// The catalog version this change made.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The list fingerprints of that version.
    pub fn fingerprints(&self) -> &ListFingerprints {
        &self.fingerprints
    }

    /// Publishes the new fingerprints on the server's bus
    /// ([`ChangeEvent::ServerFingerprint`]): on every replica whose lists differ, listen
    /// and legacy GET streams hear which lists changed, and
    /// [`Catalog::is_behind`] is true. An error means the bus did not take the event; the
    /// change stays applied on this replica.
    pub async fn announce(&self) -> Result<(), Error> {
        let event = ChangeEvent::ServerFingerprint((*self.fingerprints).clone());
        self.notifier.publish(event).await
    }
}

//! The four list methods, paginated and serialized once when the server is built and
//! again, list by list, when a runtime change touches them.
//!
//! When definitions declare scopes, a caller with a [`Principal`] sees only what its scopes
//! allow: its pages are encoded per request from the visible items and marked
//! `cacheScope: "private"`. Without declared scopes, or without a principal, every caller
//! gets the pre-encoded pages.

use std::borrow::Cow;
use std::sync::Arc;

use http::Extensions;
use serde::Serialize;
use serde_json::value::RawValue;

use super::cursor;
use crate::handler::change::Touched;
use crate::handler::registry::Registry;
use crate::handler::{Principal, ScopeHierarchy};
use crate::protocol::{
    CachePolicy, CacheScope, ErrorObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, ResultMeta, StampResult,
};

/// Encodes the page made of the items at the given indices.
type PageEncoder = Box<dyn Fn(&[usize], Option<String>) -> Box<RawValue> + Send + Sync>;

/// The per-item scopes of a list in which at least one item declares some.
struct Scoped {
    scopes: Vec<Vec<String>>,
    encode: PageEncoder,
}

/// One list, as pre-encoded result pages.
pub(crate) struct PagedList {
    fingerprint: String,
    len: usize,
    page_size: usize,
    pages: Vec<Box<RawValue>>,
    scoped: Option<Scoped>,
}

impl std::fmt::Debug for PagedList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PagedList")
            .field("fingerprint", &self.fingerprint)
            .field("len", &self.len)
            .field("page_size", &self.page_size)
            .field("scoped", &self.scoped.is_some())
            .finish_non_exhaustive()
    }
}

fn encode<R: Serialize + StampResult>(mut result: R, meta: &ResultMeta) -> Box<RawValue> {
    *result.meta_mut() = meta.clone();
    let json = serde_json::to_string(&result).expect("list results serialize");
    RawValue::from_string(json).expect("serde_json emits valid JSON")
}

impl PagedList {
    /// Splits `items` into pages of `page_size` and encodes each with `make`; `scopes` holds
    /// each item's required scopes.
    fn build<T, R, M>(
        kind: &str,
        items: Vec<T>,
        scopes: Vec<Vec<String>>,
        settings: &ListSettings,
        make: M,
    ) -> Self
    where
        T: Serialize + Clone + Send + Sync + 'static,
        R: Serialize + StampResult,
        M: Fn(Vec<T>, Option<String>, CachePolicy) -> R + Send + Sync + 'static,
    {
        let (cache, meta) = (settings.cache, &settings.meta);
        let page_size = settings.page_size.max(1);
        let all = serde_json::to_vec(&items).unwrap_or_default();
        let fingerprint = cursor::fingerprint(kind, &all);
        let chunks: Vec<&[T]> = if items.is_empty() {
            vec![&[]]
        } else {
            items.chunks(page_size).collect()
        };
        let pages = chunks
            .iter()
            .enumerate()
            .map(|(i, chunk)| {
                let end = (i + 1) * page_size;
                let next = (end < items.len()).then(|| cursor::encode(&fingerprint, end));
                encode(make(chunk.to_vec(), next, cache), meta)
            })
            .collect();
        let len = items.len();
        let scoped = scopes.iter().any(|s| !s.is_empty()).then(|| {
            let meta = meta.clone();
            let private = CachePolicy::new(cache.ttl_ms, CacheScope::Private);
            Scoped {
                scopes,
                encode: Box::new(move |indices: &[usize], next| {
                    let page = indices.iter().map(|&i| items[i].clone()).collect();
                    encode(make(page, next, private), &meta)
                }),
            }
        });
        PagedList {
            fingerprint,
            len,
            page_size,
            pages,
            scoped,
        }
    }

    /// The page a request with `cursor` asks for.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<&RawValue, ErrorObject> {
        let index = match cursor {
            None => 0,
            Some(c) => self.offset(c, &self.fingerprint, self.len)? / self.page_size,
        };
        Ok(&self.pages[index])
    }

    fn offset(&self, cursor: &str, fingerprint: &str, len: usize) -> Result<usize, ErrorObject> {
        cursor::decode(cursor, fingerprint, len)
            .filter(|o| o % self.page_size == 0)
            .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))
    }

    /// The page a request with `cursor` asks for, as the caller in `extensions` may see it.
    pub(crate) fn page_for(
        &self,
        cursor: Option<&str>,
        extensions: &Extensions,
    ) -> Result<Cow<'_, RawValue>, ErrorObject> {
        let (Some(scoped), Some(principal)) = (&self.scoped, extensions.get::<Principal>()) else {
            return self.page(cursor).map(Cow::Borrowed);
        };
        let default = ScopeHierarchy::default();
        let hierarchy = extensions.get::<ScopeHierarchy>().unwrap_or(&default);
        let visible: Vec<usize> = (0..self.len)
            .filter(|&i| hierarchy.allows(principal, &scoped.scopes[i]))
            .collect();
        let digest: String = visible.iter().map(|i| format!("{i},")).collect();
        let fingerprint = cursor::fingerprint(&self.fingerprint, digest.as_bytes());
        let start = match cursor {
            None => 0,
            Some(c) => self.offset(c, &fingerprint, visible.len())?,
        };
        let end = (start + self.page_size).min(visible.len());
        let next = (end < visible.len()).then(|| cursor::encode(&fingerprint, end));
        Ok(Cow::Owned((scoped.encode)(&visible[start..end], next)))
    }
}

/// How the lists are paged and stamped (fixed when the server is built).
#[derive(Debug, Clone)]
pub(crate) struct ListSettings {
    pub(crate) page_size: usize,
    pub(crate) cache: CachePolicy,
    pub(crate) meta: ResultMeta,
}

/// All four lists. A list no runtime change touched is shared with the previous version.
#[derive(Debug, Clone)]
pub(crate) struct Lists {
    pub(crate) tools: Arc<PagedList>,
    pub(crate) resources: Arc<PagedList>,
    pub(crate) templates: Arc<PagedList>,
    pub(crate) prompts: Arc<PagedList>,
}

impl Lists {
    /// Digests naming the current version of each list.
    pub(crate) fn fingerprints(&self) -> crate::notify::ListFingerprints {
        let resources = format!(
            "{}{}",
            self.resources.fingerprint, self.templates.fingerprint
        );
        crate::notify::ListFingerprints {
            tools: self.tools.fingerprint.clone(),
            prompts: self.prompts.fingerprint.clone(),
            resources: cursor::fingerprint("resources+templates", resources.as_bytes()),
        }
    }

    /// Encodes every list of `registry`.
    pub(crate) fn build(registry: &Registry, settings: &ListSettings) -> Self {
        Lists {
            tools: tools(registry, settings),
            resources: resources(registry, settings),
            templates: templates(registry, settings),
            prompts: prompts(registry, settings),
        }
    }

    /// The lists of `registry`, a changed copy of the one these were built from: only the
    /// `touched` lists are encoded again.
    pub(crate) fn rebuild(
        &self,
        registry: &Registry,
        touched: Touched,
        settings: &ListSettings,
    ) -> Self {
        let keep = |on: bool,
                    old: &Arc<PagedList>,
                    new: fn(&Registry, &ListSettings) -> Arc<PagedList>| {
            if on {
                new(registry, settings)
            } else {
                old.clone()
            }
        };
        Lists {
            tools: keep(touched.tools, &self.tools, tools),
            resources: keep(touched.resources, &self.resources, resources),
            templates: keep(touched.resources, &self.templates, templates),
            prompts: keep(touched.prompts, &self.prompts, prompts),
        }
    }
}

fn tools(registry: &Registry, s: &ListSettings) -> Arc<PagedList> {
    let items = registry.tools.iter().map(|t| t.tool.clone()).collect();
    let scopes = registry.tools.iter().map(|t| t.scopes.clone()).collect();
    Arc::new(PagedList::build(
        "tools",
        items,
        scopes,
        s,
        ListToolsResult::new,
    ))
}

fn resources(registry: &Registry, s: &ListSettings) -> Arc<PagedList> {
    let items = registry
        .resources
        .iter()
        .map(|r| r.resource.clone())
        .collect();
    let scopes = registry.resource_scopes();
    Arc::new(PagedList::build(
        "resources",
        items,
        scopes,
        s,
        ListResourcesResult::new,
    ))
}

fn templates(registry: &Registry, s: &ListSettings) -> Arc<PagedList> {
    let items = registry
        .templates
        .iter()
        .map(|t| t.template.clone())
        .collect();
    let scopes = registry.template_scopes();
    Arc::new(PagedList::build(
        "templates",
        items,
        scopes,
        s,
        ListResourceTemplatesResult::new,
    ))
}

fn prompts(registry: &Registry, s: &ListSettings) -> Arc<PagedList> {
    let items = registry.prompts.iter().map(|p| p.prompt.clone()).collect();
    let scopes = registry.prompts.iter().map(|p| p.scopes.clone()).collect();
    Arc::new(PagedList::build(
        "prompts",
        items,
        scopes,
        s,
        ListPromptsResult::new,
    ))
}

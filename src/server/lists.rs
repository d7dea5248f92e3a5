//! The four list methods, paginated and serialized once when the server is built.

use serde::Serialize;
use serde_json::value::RawValue;

use super::cursor;
use crate::protocol::{
    CachePolicy, ErrorObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ResultMeta, StampResult,
};

/// One list, as pre-encoded result pages.
#[derive(Debug)]
pub(crate) struct PagedList {
    fingerprint: String,
    len: usize,
    page_size: usize,
    pages: Vec<Box<RawValue>>,
}

impl PagedList {
    /// Splits `items` into pages of `page_size` and encodes each with `make`.
    fn build<T: Serialize + Clone, R: Serialize + StampResult>(
        kind: &str,
        items: &[T],
        page_size: usize,
        meta: &ResultMeta,
        make: impl Fn(Vec<T>, Option<String>) -> R,
    ) -> Self {
        let page_size = page_size.max(1);
        let all = serde_json::to_vec(items).unwrap_or_default();
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
                let mut result = make(chunk.to_vec(), next);
                *result.meta_mut() = meta.clone();
                let json = serde_json::to_string(&result).expect("list results serialize");
                RawValue::from_string(json).expect("serde_json emits valid JSON")
            })
            .collect();
        PagedList {
            fingerprint,
            len: items.len(),
            page_size,
            pages,
        }
    }

    /// The page a request with `cursor` asks for.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<&RawValue, ErrorObject> {
        let index = match cursor {
            None => 0,
            Some(c) => {
                let offset = cursor::decode(c, &self.fingerprint, self.len)
                    .filter(|o| o % self.page_size == 0)
                    .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))?;
                offset / self.page_size
            }
        };
        Ok(&self.pages[index])
    }
}

/// All four lists.
#[derive(Debug)]
pub(crate) struct Lists {
    pub(crate) tools: PagedList,
    pub(crate) resources: PagedList,
    pub(crate) templates: PagedList,
    pub(crate) prompts: PagedList,
}

impl Lists {
    pub(crate) fn build(
        registry: &crate::handler::registry::Registry,
        page_size: usize,
        cache: CachePolicy,
        meta: &ResultMeta,
    ) -> Self {
        let tools: Vec<_> = registry.tools.iter().map(|t| t.tool.clone()).collect();
        let prompts: Vec<_> = registry.prompts.iter().map(|p| p.prompt.clone()).collect();
        Lists {
            tools: PagedList::build("tools", &tools, page_size, meta, |items, next| {
                ListToolsResult::new(items, next, cache)
            }),
            resources: PagedList::build(
                "resources",
                &registry.resources,
                page_size,
                meta,
                |items, next| ListResourcesResult::new(items, next, cache),
            ),
            templates: PagedList::build(
                "templates",
                &registry.templates,
                page_size,
                meta,
                |items, next| ListResourceTemplatesResult::new(items, next, cache),
            ),
            prompts: PagedList::build("prompts", &prompts, page_size, meta, |items, next| {
                ListPromptsResult::new(items, next, cache)
            }),
        }
    }
}

//! The four list methods and `skills/list`, paginated and serialized once when the server is built and
//! again, list by list, when a runtime change touches them.
//!
//! When definitions declare scopes, a caller with a [`Principal`] sees only what its scopes
//! allow, in pages marked `cacheScope: "private"`. Those pages are pre-encoded too, in
//! pieces: each item once, and the page's head and tail; a request splices the encodings of
//! the items it may see between them (see [`Page`]), so no item is cloned or serialized per
//! request. Without declared scopes, or without a principal, every caller gets the
//! pre-encoded pages.

use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use http::Extensions;
use serde::Serialize;

use super::cursor;
use super::reply::{Encoded, Reply, SHARE_FROM};
use crate::handler::change::Touched;
use crate::handler::registry::Registry;
use crate::handler::{Principal, ScopeHierarchy};
use crate::protocol::{
    CachePolicy, CacheScope, ErrorObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, RequestId, ResultMeta, StampResult,
};

/// The pieces of a list in which at least one item declares scopes, pre-encoded for the
/// pages made per request of the items a caller may see.
pub(crate) struct Scoped {
    /// Each distinct set of required scopes, once.
    groups: Vec<Arc<[String]>>,
    /// The index in `groups` of each item's scopes.
    group_of: Vec<usize>,
    /// Every item's JSON, in order, separated by commas, then the page's tail and the `}`
    /// closing the response: a run of consecutive items is one slice of it, and a run of
    /// the last items, on a page without a cursor, ends a reply as one slice with the tail.
    joined: Bytes,
    /// Where each item's JSON starts in `joined`, and one more: where the tail starts, plus
    /// one (where an item after the last would start, after a comma).
    starts: Vec<usize>,
    /// A private page up to and including its items' `[`.
    head: String,
}

impl Scoped {
    fn new<T: Serialize>(items: &[T], scopes: Vec<Arc<[String]>>, empty_page: &[u8]) -> Self {
        let mut groups: Vec<Arc<[String]>> = Vec::new();
        let group_of = scopes
            .into_iter()
            .map(|s| match groups.iter().position(|g| *g == s) {
                Some(i) => i,
                None => {
                    groups.push(s);
                    groups.len() - 1
                }
            })
            .collect();
        let mut joined = Vec::new();
        let mut starts = Vec::with_capacity(items.len() + 1);
        for item in items {
            if !joined.is_empty() {
                joined.push(b',');
            }
            starts.push(joined.len());
            serde_json::to_writer(&mut joined, item).expect("list items serialize");
        }
        starts.push(joined.len() + 1);
        // The items array is the first array of a page (after `resultType`), and
        // `nextCursor`, when present, comes right after it.
        let page = std::str::from_utf8(empty_page).expect("serde_json emits UTF-8");
        let at = page
            .find("[]")
            .expect("an empty page has an empty items array")
            + 1;
        joined.extend_from_slice(&page.as_bytes()[at..]);
        joined.push(b'}');
        Scoped {
            groups,
            group_of,
            joined: Bytes::from(joined),
            starts,
            head: page[..at].to_owned(),
        }
    }

    /// Where the tail starts in `joined`: a private page without `nextCursor` from its
    /// items' `]` on, and the response's `}`.
    fn tail_start(&self) -> usize {
        self.starts[self.group_of.len()] - 1
    }

    /// The indices of the items `principal` may see.
    fn visible(&self, hierarchy: &ScopeHierarchy, principal: &Principal) -> Vec<usize> {
        let allowed: Vec<bool> = self
            .groups
            .iter()
            .map(|g| hierarchy.allows(principal, g))
            .collect();
        let n = self.group_of.len();
        if allowed.iter().all(|&a| a) {
            return (0..n).collect();
        }
        let mut visible = Vec::with_capacity(n);
        visible.extend((0..n).filter(|&i| allowed[self.group_of[i]]));
        visible
    }

    /// Where the JSON of items `run` (consecutive) is in `joined`, without a trailing comma.
    fn span(&self, run: std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.starts[run.start]..self.starts[run.end] - 1
    }
}

/// `items` (ascending indices) as runs of consecutive indices.
fn runs(items: &[usize]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut rest = items;
    std::iter::from_fn(move || {
        let &first = rest.first()?;
        let len = rest
            .iter()
            .enumerate()
            .take_while(|&(k, &i)| i == first + k)
            .count();
        rest = &rest[len..];
        Some(first..first + len)
    })
}

/// The result a list request gets: a pre-encoded page, or one spliced from the pre-encoded
/// items its caller may see.
pub(crate) enum Page<'a> {
    /// A page encoded when the list was built.
    Encoded(&'a Encoded),
    /// The `items` of a private page, and its `nextCursor`.
    Visible {
        list: &'a Scoped,
        items: Vec<usize>,
        next: Option<String>,
    },
}

impl Page<'_> {
    /// The JSON-RPC response for request `id` carrying this page.
    pub(crate) fn reply(&self, id: &RequestId) -> Reply {
        match self {
            Page::Encoded(page) => Reply::encoded(id, page),
            Page::Visible { list, items, next } => {
                let next = next.as_ref().map(|c| {
                    serde_json::to_string(c).expect("a cursor serializes as a JSON string")
                });
                let (tail, len) = (list.tail_start(), list.group_of.len());
                // The last run of items ends the reply with the tail when it reaches the
                // end of the list and no cursor comes between: then it is not copied.
                let ends = |run: &std::ops::Range<usize>| next.is_none() && run.end == len;
                let copied = list.head.len()
                    + (list.joined.len() - tail)
                    + next.as_ref().map_or(0, |c| c.len() + 14)
                    + runs(items)
                        .map(|run| match ends(&run) {
                            // `end_with` copies the ending run (and the tail) when it is short.
                            true => match list.joined.len() - list.starts[run.start] {
                                n if n < SHARE_FROM => n + 1,
                                _ => 0,
                            },
                            false => list.span(run).len() + 1,
                        })
                        .sum::<usize>();
                Reply::encoded_with(id, copied, |mut body| {
                    body.open().extend_from_slice(list.head.as_bytes());
                    for (n, run) in runs(items).enumerate() {
                        if n > 0 {
                            body.open().push(b',');
                        }
                        if ends(&run) {
                            let from = list.starts[run.start];
                            return body.end_with(&list.joined, from..list.joined.len());
                        }
                        body.open().extend_from_slice(&list.joined[list.span(run)]);
                    }
                    let mut tail = &list.joined[tail..];
                    if let Some(cursor) = &next {
                        // `]` closes the items; the cursor goes between it and the rest.
                        body.open().extend_from_slice(b"],\"nextCursor\":");
                        body.open().extend_from_slice(cursor.as_bytes());
                        tail = &tail[1..];
                    }
                    body.open().extend_from_slice(tail);
                    body.end()
                })
            }
        }
    }
}

/// One list, as pre-encoded result pages.
pub(crate) struct PagedList {
    fingerprint: String,
    len: usize,
    page_size: usize,
    pages: Vec<Encoded>,
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

fn encode<R: Serialize + StampResult>(mut result: R, meta: &ResultMeta) -> Encoded {
    *result.meta_mut() = meta.clone();
    Encoded::new(serde_json::to_vec(&result).expect("list results serialize"))
}

impl PagedList {
    /// Splits `items` into pages of `page_size` and encodes each with `make`; `scopes` holds
    /// each item's required scopes.
    fn build<T, R, M>(
        kind: &str,
        items: Vec<T>,
        scopes: Vec<Arc<[String]>>,
        settings: &ListSettings,
        make: M,
    ) -> Self
    where
        T: Serialize + Clone,
        R: Serialize + StampResult,
        M: Fn(Vec<T>, Option<String>, CachePolicy) -> R,
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
            let private = CachePolicy::new(cache.ttl_ms, CacheScope::Private);
            Scoped::new(
                &items,
                scopes,
                encode(make(Vec::new(), None, private), meta).json(),
            )
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
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<&Encoded, ErrorObject> {
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
    ) -> Result<Page<'_>, ErrorObject> {
        let (Some(scoped), Some(principal)) = (&self.scoped, extensions.get::<Principal>()) else {
            return self.page(cursor).map(Page::Encoded);
        };
        let default = ScopeHierarchy::default();
        let hierarchy = extensions.get::<ScopeHierarchy>().unwrap_or(&default);
        let visible = scoped.visible(hierarchy, principal);
        // A caller's pages are a list of their own, named by which items it sees; the name
        // is needed only to read or write a cursor.
        let paged = cursor.is_some() || visible.len() > self.page_size;
        let fingerprint = if paged {
            let mut digest = String::with_capacity(visible.len() * 4);
            for i in &visible {
                let _ = write!(digest, "{i},");
            }
            cursor::fingerprint(&self.fingerprint, digest.as_bytes())
        } else {
            String::new()
        };
        let start = match cursor {
            None => 0,
            Some(c) => self.offset(c, &fingerprint, visible.len())?,
        };
        let end = (start + self.page_size).min(visible.len());
        let next = (end < visible.len()).then(|| cursor::encode(&fingerprint, end));
        let mut items = visible;
        items.truncate(end);
        items.drain(..start);
        Ok(Page::Visible {
            list: scoped,
            items,
            next,
        })
    }
}

/// How the lists are paged and stamped (fixed when the server is built).
#[derive(Debug, Clone)]
pub(crate) struct ListSettings {
    pub(crate) page_size: usize,
    pub(crate) cache: CachePolicy,
    pub(crate) meta: ResultMeta,
}

/// All four lists, and the skills (Skills extension). A list no runtime change touched is
/// shared with the previous version.
#[derive(Debug, Clone)]
pub(crate) struct Lists {
    pub(crate) tools: Arc<PagedList>,
    pub(crate) resources: Arc<PagedList>,
    pub(crate) templates: Arc<PagedList>,
    pub(crate) prompts: Arc<PagedList>,
    pub(crate) skills: Arc<PagedList>,
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
            skills: skills(registry, settings),
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
            skills: keep(touched.skills, &self.skills, skills),
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

fn skills(registry: &Registry, s: &ListSettings) -> Arc<PagedList> {
    let items = registry.skills.iter().map(|k| k.entry.clone()).collect();
    let scopes = registry.skills.iter().map(|_| Arc::from([])).collect();
    Arc::new(PagedList::build(
        "skills",
        items,
        scopes,
        s,
        ListSkillsResult::new,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Implementation, JsonObject, Tool};

    fn settings(page_size: usize) -> ListSettings {
        ListSettings {
            page_size,
            cache: CachePolicy::new(60_000, CacheScope::Public),
            meta: ResultMeta {
                server_info: Some(Arc::new(Implementation::new("lists-test", "1.0.0"))),
                extra: JsonObject::new(),
            },
        }
    }

    /// Tool `i` of `n`: every third needs `files:read`, every fifth `files:write` too.
    fn scoped_tools(n: usize, page_size: usize) -> (Vec<Tool>, PagedList) {
        scoped_tools_described(n, page_size, 0)
    }

    /// As [`scoped_tools`], each description `padding` bytes longer.
    fn scoped_tools_described(
        n: usize,
        page_size: usize,
        padding: usize,
    ) -> (Vec<Tool>, PagedList) {
        let tools: Vec<Tool> = (0..n)
            .map(|i| {
                let mut t = Tool::new(format!("t{i} \"quoted\" é"), JsonObject::new());
                t.description = Some(format!("tool {i}{}", "-".repeat(padding)));
                t
            })
            .collect();
        let scopes = (0..n)
            .map(|i| match (i % 3, i % 5) {
                (0, 0) => vec!["files:read".to_owned(), "files:write".to_owned()],
                (0, _) => vec!["files:read".to_owned()],
                _ => Vec::new(),
            })
            .map(Arc::from)
            .collect();
        let list = PagedList::build(
            "tools",
            tools.clone(),
            scopes,
            &settings(page_size),
            ListToolsResult::new,
        );
        (tools, list)
    }

    fn as_caller(scopes: &[&str]) -> Extensions {
        let mut e = Extensions::new();
        let mut p = Principal::new("caller");
        p.scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
        e.insert(p);
        e
    }

    /// What the page would be if its items were cloned and serialized, the way the pages of
    /// a scoped list were made before they were spliced.
    fn serialized(items: Vec<Tool>, next: Option<String>, page_size: usize) -> Vec<u8> {
        let s = settings(page_size);
        let private = CachePolicy::new(s.cache.ttl_ms, CacheScope::Private);
        let page = encode(ListToolsResult::new(items, next, private), &s.meta);
        Reply::encoded(&RequestId::Number(7), &page)
            .to_bytes()
            .to_vec()
    }

    fn page_items(reply: &Reply) -> (Vec<String>, Option<String>) {
        let v: serde_json::Value = serde_json::from_slice(&reply.to_bytes()).unwrap();
        let names = v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        (names, v["result"]["nextCursor"].as_str().map(str::to_owned))
    }

    #[test]
    fn a_spliced_page_is_byte_for_byte_the_serialized_one() {
        let id = RequestId::Number(7);
        // (Item 0 needs scopes, so every one of these lists is a scoped one.) Long items
        // make runs of visible items long enough to be referenced, not copied.
        for (n, page_size, padding) in [
            (1, 10, 0),
            (10, 10, 0),
            (23, 5, 0),
            (40, 7, 0),
            (5, 1, 0),
            (40, 100, 300),
            (40, 9, 300),
            (3, 10, 3000),
        ] {
            let (tools, list) = scoped_tools_described(n, page_size, padding);
            for granted in [&[][..], &["files:read"], &["files:read", "files:write"]] {
                let caller = as_caller(granted);
                let allowed = |i: usize| match (i % 3, i % 5) {
                    (0, 0) => granted.len() == 2,
                    (0, _) => !granted.is_empty(),
                    _ => true,
                };
                let visible: Vec<Tool> = (0..n)
                    .filter(|&i| allowed(i))
                    .map(|i| tools[i].clone())
                    .collect();
                // Walk every page, following the cursors.
                let (mut cursor, mut offset) = (None::<String>, 0);
                loop {
                    let page = list.page_for(cursor.as_deref(), &caller).unwrap();
                    let reply = page.reply(&id);
                    let (_, next) = page_items(&reply);
                    let end = (offset + page_size).min(visible.len());
                    let want = serialized(visible[offset..end].to_vec(), next.clone(), page_size);
                    assert_eq!(
                        String::from_utf8(reply.to_bytes().to_vec()).unwrap(),
                        String::from_utf8(want).unwrap(),
                        "{n} tools, page size {page_size}, scopes {granted:?}, offset {offset}"
                    );
                    // The last page of a caller who sees the last items ends with their
                    // shared encoding (and the tail), when it is long.
                    let chunks = reply.chunks();
                    let long = (end - offset) * padding >= SHARE_FROM;
                    if long && next.is_none() && granted.len() == 2 {
                        assert_eq!(chunks.len(), 2, "{n} tools, page size {page_size}");
                        assert!(chunks[1].len() > padding);
                    }
                    if next.is_some() {
                        assert_eq!(chunks.len(), 1);
                    }
                    assert_eq!(next.is_some(), end < visible.len());
                    match next {
                        Some(c) => (cursor, offset) = (Some(c), end),
                        None => break,
                    }
                }
            }
        }
    }

    #[test]
    fn runs_group_consecutive_items() {
        let all: Vec<_> = runs(&[0, 1, 2, 5, 7, 8]).collect();
        assert_eq!(all, [0..3, 5..6, 7..9]);
        assert_eq!(runs(&[]).count(), 0);
        assert_eq!(runs(&[4]).next(), Some(4..5));
    }

    #[test]
    fn each_caller_pages_through_only_what_it_may_see() {
        let (_, list) = scoped_tools(23, 5);
        let walk = |caller: &Extensions| {
            let mut names = Vec::new();
            let mut cursor = None;
            loop {
                let reply = list
                    .page_for(cursor.as_deref(), caller)
                    .unwrap()
                    .reply(&RequestId::Number(1));
                let (page, next) = page_items(&reply);
                names.extend(page);
                match next {
                    Some(c) => cursor = Some(c),
                    None => return names,
                }
            }
        };
        let reader = walk(&as_caller(&["files:read"]));
        let nobody = walk(&as_caller(&[]));
        // 23 tools: 8 need files:read (0, 3, …, 21), 2 of them files:write too (0, 15).
        assert_eq!(reader.len(), 21);
        assert_eq!(nobody.len(), 15);
        assert!(
            nobody
                .iter()
                .all(|n| !reader.is_empty() && reader.contains(n))
        );
        assert!(
            !reader
                .iter()
                .any(|n| n.starts_with("t0 ") || n.starts_with("t15 "))
        );
        // A cursor names the caller's own view: another caller's is refused.
        let reader_cursor = page_items(
            &list
                .page_for(None, &as_caller(&["files:read"]))
                .unwrap()
                .reply(&RequestId::Number(1)),
        )
        .1
        .unwrap();
        let refused = list.page_for(Some(&reader_cursor), &as_caller(&[]));
        assert_eq!(refused.err().unwrap().code, -32602);
        // Without a principal: the pre-encoded public pages, everything in them.
        let public = list.page_for(None, &Extensions::new()).unwrap();
        assert!(matches!(public, Page::Encoded(_)));
    }
}

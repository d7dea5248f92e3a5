//! OAuth scopes: which granted scope satisfies which required one, and which scopes an
//! operation needs.
//!
//! Definitions declare the scopes they need at registration
//! ([`ToolDef::scopes`](crate::ToolDef::scopes) and the same on prompts, resources and
//! templates). An authorization layer checks them before the request is read, and the
//! server shows in its lists only what the caller may use.

use std::borrow::Cow;
use std::ops::Deref;
use std::sync::Arc;

use super::Principal;

/// How a granted scope covers a required one.
///
/// A granted scope always covers itself. With a separator (the default is `:`), a scope also
/// covers every scope below it: `files` covers `files:read` and `files:read:meta`, but not
/// `filesystem`. Explicit implications add edges that names alone do not show
/// (`admin` ⊇ `files`), and are followed transitively.
///
/// ```
/// use stateless_mcp::handler::ScopeHierarchy;
///
/// let h = ScopeHierarchy::default().implies("admin", "files");
/// assert!(h.covers("files", "files:read"));
/// assert!(!h.covers("files", "filesystem"));
/// assert!(h.covers("admin", "files:write"));
/// assert!(!ScopeHierarchy::flat().covers("files", "files:read"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeHierarchy {
    separator: Option<char>,
    implied: Vec<(String, String)>,
}

impl Default for ScopeHierarchy {
    /// Colon-separated hierarchy, no explicit implications.
    fn default() -> Self {
        ScopeHierarchy {
            separator: Some(':'),
            implied: Vec::new(),
        }
    }
}

impl ScopeHierarchy {
    /// No hierarchy: a scope covers only itself (plus explicit implications).
    pub fn flat() -> Self {
        ScopeHierarchy {
            separator: None,
            implied: Vec::new(),
        }
    }

    /// A hierarchy whose levels are separated by `separator` (`:` by default; `.` and `/` are
    /// common too).
    pub fn with_separator(separator: char) -> Self {
        ScopeHierarchy {
            separator: Some(separator),
            implied: Vec::new(),
        }
    }

    /// Declares that `broader` covers `narrower` (and everything `narrower` covers).
    #[must_use]
    pub fn implies(mut self, broader: impl Into<String>, narrower: impl Into<String>) -> Self {
        self.implied.push((broader.into(), narrower.into()));
        self
    }

    /// Whether the granted scope `granted` covers `required`.
    pub fn covers(&self, granted: &str, required: &str) -> bool {
        self.covers_within(granted, required, self.implied.len())
    }

    fn covers_within(&self, granted: &str, required: &str, depth: usize) -> bool {
        if granted == required || self.is_prefix(granted, required) {
            return true;
        }
        depth > 0
            && self
                .implied
                .iter()
                .filter(|(broader, _)| broader == granted || self.is_prefix(granted, broader))
                .any(|(_, narrower)| self.covers_within(narrower, required, depth - 1))
    }

    fn is_prefix(&self, granted: &str, required: &str) -> bool {
        let Some(sep) = self.separator else {
            return false;
        };
        !granted.is_empty()
            && required
                .strip_prefix(granted)
                .is_some_and(|rest| rest.starts_with(sep))
    }

    /// Whether some scope in `granted` covers `required`.
    pub fn satisfied(&self, granted: &[String], required: &str) -> bool {
        granted.iter().any(|g| self.covers(g, required))
    }

    /// The scopes of `required` that nothing in `granted` covers, in order, without repeats.
    pub fn missing<'a>(&self, granted: &[String], required: &'a [String]) -> Vec<&'a str> {
        let mut out: Vec<&'a str> = Vec::new();
        for r in required {
            if !self.satisfied(granted, r) && !out.contains(&r.as_str()) {
                out.push(r);
            }
        }
        out
    }

    /// Whether `principal` may use something that needs `required`.
    pub fn allows(&self, principal: &Principal, required: &[String]) -> bool {
        required
            .iter()
            .all(|r| self.satisfied(&principal.scopes, r))
    }
}

/// What an operation needs beyond what every request needs: the scopes declared on the tool,
/// prompt or resource that a request for `method` names (`name` is the `Mcp-Name` value: a
/// tool or prompt name, or a resource URI).
///
/// [`Server`](crate::Server) implements it from the scopes declared at registration, so an
/// authorization layer can check them from the request's headers before reading its body.
pub trait ScopeRequirements: Send + Sync + 'static {
    /// The scopes an operation needs; empty when it needs nothing in particular. Asked on
    /// every request an authorization layer checks: hand out what is stored, borrowed or
    /// shared, rather than a new list.
    fn required_scopes(&self, method: &str, name: Option<&str>) -> RequiredScopes<'_>;

    /// Every scope any operation may need (for `scopes_supported` in metadata).
    fn all_scopes(&self) -> Vec<String> {
        Vec::new()
    }
}

impl ScopeRequirements for () {
    fn required_scopes(&self, _method: &str, _name: Option<&str>) -> RequiredScopes<'_> {
        RequiredScopes::NONE
    }
}

/// The scopes an operation needs, as [`ScopeRequirements::required_scopes`] hands them out:
/// borrowed from the requirements, or shared with a list they keep (an `Arc`, so a list kept
/// behind a swappable snapshot is not copied per request). Reads as a `[String]`.
///
/// ```
/// use std::sync::Arc;
/// use stateless_mcp::handler::RequiredScopes;
///
/// let kept: Arc<[String]> = Arc::from(vec!["files:write".to_owned()]);
/// let shared = RequiredScopes::from(kept.clone());
/// assert_eq!(&*shared, ["files:write"]);
/// assert_eq!(shared, RequiredScopes::from(&kept[..]));
/// assert!(RequiredScopes::NONE.is_empty());
/// ```
#[derive(Clone, Debug)]
pub enum RequiredScopes<'a> {
    /// A list the requirements hold.
    Borrowed(&'a [String]),
    /// A list shared with the requirements.
    Shared(Arc<[String]>),
}

impl RequiredScopes<'_> {
    /// No scopes in particular.
    pub const NONE: RequiredScopes<'static> = RequiredScopes::Borrowed(&[]);
}

impl Deref for RequiredScopes<'_> {
    type Target = [String];

    fn deref(&self) -> &[String] {
        match self {
            RequiredScopes::Borrowed(s) => s,
            RequiredScopes::Shared(s) => s,
        }
    }
}

impl PartialEq for RequiredScopes<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for RequiredScopes<'_> {}

impl<'a> From<&'a [String]> for RequiredScopes<'a> {
    fn from(scopes: &'a [String]) -> Self {
        RequiredScopes::Borrowed(scopes)
    }
}

impl From<Arc<[String]>> for RequiredScopes<'_> {
    fn from(scopes: Arc<[String]>) -> Self {
        RequiredScopes::Shared(scopes)
    }
}

/// A list made for the call (one allocation to share it).
impl From<Vec<String>> for RequiredScopes<'_> {
    fn from(scopes: Vec<String>) -> Self {
        RequiredScopes::Shared(scopes.into())
    }
}

/// What `required_scopes` returned before it could share: borrowed stays borrowed.
impl<'a> From<Cow<'a, [String]>> for RequiredScopes<'a> {
    fn from(scopes: Cow<'a, [String]>) -> Self {
        match scopes {
            Cow::Borrowed(s) => RequiredScopes::Borrowed(s),
            Cow::Owned(v) => v.into(),
        }
    }
}

/// Collects scope names given to a definition's `scopes` setter.
pub(crate) fn collect<I, S>(scopes: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut out: Vec<String> = Vec::new();
    for s in scopes {
        let s = s.into();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn colon_hierarchy() {
        let h = ScopeHierarchy::default();
        assert!(h.covers("files", "files"));
        assert!(h.covers("files", "files:read"));
        assert!(h.covers("files", "files:read:meta"));
        assert!(h.covers("files:read", "files:read:meta"));
        assert!(!h.covers("files:read", "files"));
        assert!(!h.covers("files", "filesystem"));
        assert!(!h.covers("files:read", "files:write"));
        assert!(!h.covers("", "files"));
    }

    #[test]
    fn flat_and_explicit() {
        let h = ScopeHierarchy::flat()
            .implies("admin", "files")
            .implies("files", "notes");
        assert!(!h.covers("files", "files:read"), "no separator");
        assert!(h.covers("admin", "files"));
        assert!(h.covers("admin", "notes"), "transitive");
        assert!(!h.covers("files", "admin"));
        let cyclic = ScopeHierarchy::flat().implies("a", "b").implies("b", "a");
        assert!(cyclic.covers("a", "b"));
        assert!(!cyclic.covers("a", "c"), "cycles terminate");
        let h = ScopeHierarchy::default().implies("admin", "files");
        assert!(
            h.covers("admin", "files:write"),
            "implication then separator"
        );
    }

    #[test]
    fn missing_lists_every_uncovered_scope_once() {
        let h = ScopeHierarchy::default();
        let granted = v(&["files:read", "mail"]);
        let required = v(&[
            "files:read",
            "files:write",
            "mail:send",
            "calendar",
            "calendar",
        ]);
        assert_eq!(h.missing(&granted, &required), ["files:write", "calendar"]);
        let p = Principal::new("u").with_scopes(["files"]);
        assert!(h.allows(&p, &v(&["files:read", "files:write"])));
        assert!(!h.allows(&p, &v(&["files:read", "mail"])));
        assert!(h.allows(&p, &[]));
    }

    #[test]
    fn collect_dedups() {
        assert_eq!(collect(["a", "b", "a"]), ["a", "b"]);
    }
}

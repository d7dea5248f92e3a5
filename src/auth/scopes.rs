//! Which scopes a request needs, read from its headers before its body: the scopes every
//! request needs, those of its method (`Mcp-Method`), and those declared on the tool,
//! prompt or resource it names (`Mcp-Name`).
//!
//! The headers cannot be used to lie: the MCP endpoint refuses (`-32020`, HTTP 400) a
//! request whose `Mcp-Method` or `Mcp-Name` is missing or differs from its body, before any
//! handler runs. Both sides decode the headers with the same function.

use std::collections::HashMap;
use std::sync::Arc;

use http::HeaderMap;

use crate::handler::{RequiredScopes, ScopeRequirements};
use crate::mirrored::{self, Mirrored};

/// The scope rules of a resource server.
pub(crate) struct ScopeRules {
    pub(crate) every_request: Vec<String>,
    pub(crate) by_method: HashMap<String, Vec<String>>,
    pub(crate) operations: Arc<dyn ScopeRequirements>,
}

impl ScopeRules {
    /// Every scope the request needs, in order, without repeats (beyond those of
    /// `every_request`). When only one rule asks for scopes its list is handed on as it is,
    /// borrowed or shared; only scopes of several rules are merged into a new list.
    pub(crate) fn required(&self, request_headers: &HeaderMap) -> RequiredScopes<'_> {
        let every = RequiredScopes::Borrowed(&self.every_request);
        let Mirrored::Value(method) = mirrored::read(request_headers, mirrored::METHOD, false)
        else {
            return every;
        };
        let by_method = RequiredScopes::Borrowed(
            self.by_method
                .get(method.as_ref())
                .map_or(&[][..], |s| s.as_slice()),
        );
        let name = match mirrored::read(request_headers, mirrored::NAME, true) {
            Mirrored::Value(n) => Some(n),
            _ => None,
        };
        let item = self.operations.required_scopes(&method, name.as_deref());
        match (every.is_empty(), by_method.is_empty(), item.is_empty()) {
            (_, true, true) => every,
            (true, false, true) if distinct(&by_method) => by_method,
            (true, true, false) if distinct(&item) => item,
            _ => {
                let mut out = self.every_request.clone();
                for s in by_method.iter().chain(item.iter()) {
                    if !out.contains(s) {
                        out.push(s.clone());
                    }
                }
                out.into()
            }
        }
    }

    /// Every scope any rule mentions, sorted, without repeats.
    pub(crate) fn all(&self, declared: Vec<String>) -> Vec<String> {
        let mut all: Vec<String> = self
            .every_request
            .iter()
            .chain(self.by_method.values().flatten())
            .cloned()
            .chain(declared)
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// Whether no scope of `scopes` repeats.
fn distinct(scopes: &[String]) -> bool {
    scopes
        .iter()
        .enumerate()
        .all(|(i, s)| !scopes[..i].contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ops;
    impl ScopeRequirements for Ops {
        fn required_scopes(&self, method: &str, name: Option<&str>) -> RequiredScopes<'_> {
            match (method, name) {
                ("tools/call", Some("secret")) => vec!["files:write".to_owned()].into(),
                ("tools/call", Some("twice")) => {
                    vec!["a".to_owned(), "b".to_owned(), "a".to_owned()].into()
                }
                _ => RequiredScopes::NONE,
            }
        }
    }

    fn rules() -> ScopeRules {
        ScopeRules {
            every_request: vec!["mcp".into()],
            by_method: HashMap::from([("tools/call".into(), vec!["tools".into(), "mcp".into()])]),
            operations: Arc::new(Ops),
        }
    }

    fn h(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        m
    }

    #[test]
    fn from_headers() {
        let r = rules();
        assert_eq!(*r.required(&h(&[])), ["mcp"]);
        assert_eq!(*r.required(&h(&[("mcp-method", "tools/list")])), ["mcp"]);
        assert_eq!(
            *r.required(&h(&[("mcp-method", "tools/call"), ("mcp-name", "secret")])),
            ["mcp", "tools", "files:write"]
        );
        // Base64-encoded names decode the way the endpoint decodes them.
        assert_eq!(
            *r.required(&h(&[
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?c2VjcmV0?=")
            ])),
            ["mcp", "tools", "files:write"]
        );
        assert_eq!(r.all(vec!["x".into(), "mcp".into()]), ["mcp", "tools", "x"]);
    }

    #[test]
    fn one_rule_hands_its_scopes_on_and_several_are_merged() {
        let mut r = rules();
        let call = |name: &'static str| h(&[("mcp-method", "tools/call"), ("mcp-name", name)]);
        // Only the operation asks: its list, not a copy.
        r.every_request.clear();
        r.by_method.clear();
        assert!(matches!(
            r.required(&call("secret")),
            RequiredScopes::Shared(s) if *s == ["files:write"]
        ));
        // Repeats in a single list are still dropped.
        assert_eq!(*r.required(&call("twice")), ["a", "b"]);
        assert!(r.required(&call("other")).is_empty());
        // Only the method asks: borrowed from the rules.
        r.by_method
            .insert("tools/call".into(), vec!["tools".into(), "tools".into()]);
        assert_eq!(*r.required(&call("other")), ["tools"]);
        r.by_method
            .insert("tools/call".into(), vec!["tools".into()]);
        assert!(matches!(
            r.required(&call("other")),
            RequiredScopes::Borrowed(s) if *s == ["tools"]
        ));
        assert_eq!(*r.required(&call("secret")), ["tools", "files:write"]);
        // Every request's scopes are kept as given.
        r.every_request = vec!["mcp".into(), "mcp".into()];
        assert_eq!(*r.required(&call("other")), ["mcp", "mcp", "tools"]);
        assert_eq!(*r.required(&h(&[])), ["mcp", "mcp"]);
    }
}

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

use crate::handler::ScopeRequirements;
use crate::mirrored::{self, Mirrored};

/// The scope rules of a resource server.
pub(crate) struct ScopeRules {
    pub(crate) every_request: Vec<String>,
    pub(crate) by_method: HashMap<String, Vec<String>>,
    pub(crate) operations: Arc<dyn ScopeRequirements>,
}

impl ScopeRules {
    /// Every scope the request needs, in order, without repeats.
    pub(crate) fn required(&self, request_headers: &HeaderMap) -> Vec<String> {
        let mut out = self.every_request.clone();
        let Mirrored::Value(method) = mirrored::read(request_headers, mirrored::METHOD, false)
        else {
            return out;
        };
        let mut add = |scopes: &[String]| {
            for s in scopes {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
        };
        if let Some(s) = self.by_method.get(&method) {
            add(s);
        }
        let name = match mirrored::read(request_headers, mirrored::NAME, true) {
            Mirrored::Value(n) => Some(n),
            _ => None,
        };
        add(&self.operations.required_scopes(&method, name.as_deref()));
        out
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    struct Ops;
    impl ScopeRequirements for Ops {
        fn required_scopes(&self, method: &str, name: Option<&str>) -> Cow<'_, [String]> {
            match (method, name) {
                ("tools/call", Some("secret")) => Cow::Owned(vec!["files:write".into()]),
                _ => Cow::Borrowed(&[]),
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
        assert_eq!(r.required(&h(&[])), ["mcp"]);
        assert_eq!(r.required(&h(&[("mcp-method", "tools/list")])), ["mcp"]);
        assert_eq!(
            r.required(&h(&[("mcp-method", "tools/call"), ("mcp-name", "secret")])),
            ["mcp", "tools", "files:write"]
        );
        // Base64-encoded names decode the way the endpoint decodes them.
        assert_eq!(
            r.required(&h(&[
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?c2VjcmV0?=")
            ])),
            ["mcp", "tools", "files:write"]
        );
        assert_eq!(r.all(vec!["x".into(), "mcp".into()]), ["mcp", "tools", "x"]);
    }
}

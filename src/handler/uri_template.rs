//! Matching URIs against RFC 6570 URI templates (levels 1–3 and the explode modifier).

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;
use regex::Regex;

/// The variables a URI bound in a template, percent-decoded.
pub type TemplateVars = BTreeMap<String, String>;

/// A compiled URI template that can tell whether a URI matches and extract its variables.
#[derive(Debug, Clone)]
pub(crate) struct UriTemplate {
    #[cfg(feature = "fuzzing")]
    source: String,
    regex: Regex,
    /// Variable names in capture-group order, with whether the group is a query/form list.
    vars: Vec<(String, Kind)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Single,
    Query,
}

impl UriTemplate {
    /// Compiles `template`; an unbalanced brace or empty expression is an error.
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
        let mut pattern = String::from("^");
        let mut vars = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            pattern.push_str(&regex::escape(&rest[..open]));
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| format!("unclosed '{{' in URI template {template:?}"))?;
            let expr = &after[..close];
            rest = &after[close + 1..];
            let (op, list) = match expr.chars().next() {
                Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &expr[1..]),
                Some(_) => (None, expr),
                None => return Err(format!("empty expression in URI template {template:?}")),
            };
            let names: Vec<String> = list
                .split(',')
                .map(|v| {
                    v.trim_end_matches('*')
                        .split(':')
                        .next()
                        .unwrap_or("")
                        .to_owned()
                })
                .collect();
            if names.iter().any(|n| {
                n.is_empty()
                    || !n
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            }) {
                return Err(format!(
                    "invalid variable in expression {{{expr}}} of {template:?}"
                ));
            }
            match op {
                Some('?') | Some('&') => {
                    let lead = if op == Some('?') { r"\?" } else { "&" };
                    pattern.push_str(&format!("(?:{lead}([^#]*))?"));
                    vars.push((names.join(","), Kind::Query));
                }
                _ => {
                    let (prefix, class) = match op {
                        None => ("", "[^/?#&,]*"),
                        Some('+') => ("", "[^?#]*"),
                        Some('#') => ("#", ".*"),
                        Some('.') => (r"\.", "[^/?#.]*"),
                        Some('/') => ("/", "[^?#]*"),
                        Some(';') => (";", "[^/?#]*"),
                        _ => unreachable!("operators are matched above"),
                    };
                    for (i, name) in names.iter().enumerate() {
                        let sep = if i == 0 {
                            prefix.to_owned()
                        } else {
                            match op {
                                None | Some('+') | Some('#') => ",".to_owned(),
                                _ => prefix.to_owned(),
                            }
                        };
                        if op == Some(';') {
                            pattern
                                .push_str(&format!("(?:{sep}{}=?({class}))?", regex::escape(name)));
                        } else if op.is_some() && op != Some('+') {
                            pattern.push_str(&format!("(?:{sep}({class}))?"));
                        } else {
                            pattern.push_str(&format!("{sep}({class})"));
                        }
                        vars.push((name.clone(), Kind::Single));
                    }
                }
            }
        }
        if rest.contains('}') {
            return Err(format!("unbalanced '}}' in URI template {template:?}"));
        }
        pattern.push_str(&regex::escape(rest));
        pattern.push('$');
        let regex = Regex::new(&pattern).map_err(|e| format!("URI template {template:?}: {e}"))?;
        Ok(UriTemplate {
            #[cfg(feature = "fuzzing")]
            source: template.to_owned(),
            regex,
            vars,
        })
    }

    /// The template text (the fuzz targets check that parsing keeps it).
    #[cfg(feature = "fuzzing")]
    pub(crate) fn as_str(&self) -> &str {
        &self.source
    }

    /// The variables `uri` binds, or `None` if it does not match.
    pub(crate) fn matches(&self, uri: &str) -> Option<TemplateVars> {
        let caps = self.regex.captures(uri)?;
        let mut out = TemplateVars::new();
        for (i, (name, kind)) in self.vars.iter().enumerate() {
            let Some(m) = caps.get(i + 1) else { continue };
            match kind {
                Kind::Single => {
                    out.insert(name.clone(), decode(m.as_str()));
                }
                Kind::Query => {
                    let wanted: Vec<&str> = name.split(',').collect();
                    for pair in m.as_str().split('&') {
                        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                        if wanted.contains(&k) {
                            out.insert(k.to_owned(), decode(v));
                        }
                    }
                }
            }
        }
        Some(out)
    }
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, uri: &str) -> Option<TemplateVars> {
        UriTemplate::parse(t).unwrap().matches(uri)
    }

    #[test]
    fn simple_and_reserved() {
        let v = m("test://template/{id}/data", "test://template/123/data").unwrap();
        assert_eq!(v["id"], "123");
        assert!(m("test://template/{id}/data", "test://template/1/2/data").is_none());
        assert_eq!(
            m("file:///{+path}", "file:///a/b%20c.txt").unwrap()["path"],
            "a/b c.txt"
        );
        assert_eq!(m("users/{a},{b}", "users/x,y").unwrap()["b"], "y");
    }

    #[test]
    fn path_and_query_operators() {
        let v = m(
            "db://{table}{/id}{?fields,limit}",
            "db://users/7?limit=5&fields=a",
        )
        .unwrap();
        assert_eq!(v["table"], "users");
        assert_eq!(v["id"], "7");
        assert_eq!(v["limit"], "5");
        assert_eq!(v["fields"], "a");
        let v = m("db://{table}{?limit}", "db://users").unwrap();
        assert!(!v.contains_key("limit"));
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(UriTemplate::parse("a/{id").is_err());
        assert!(UriTemplate::parse("a/{}").is_err());
        assert!(UriTemplate::parse("a/}").is_err());
        assert!(UriTemplate::parse("a/{bad-name}").is_err());
    }
}

//! The rules for `x-mcp-header` annotations in a tool's `inputSchema` (SEP-2243).
//!
//! A property may ask to be mirrored into an `Mcp-Param-{Name}` HTTP header. Clients drop
//! tools that break these rules, so the registry rejects them when it is built.

use serde_json::Value;

use crate::protocol::JsonObject;

/// The JSON type a mirrored parameter has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    String,
    Integer,
    Boolean,
}

/// One property mirrored into an `Mcp-Param-{Name}` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    /// The name as annotated, e.g. `Region` (header `Mcp-Param-Region`).
    pub(crate) name: String,
    /// The name lower-cased, for case-insensitive header lookup.
    pub(crate) lower: String,
    /// Property names from the root down to the annotated property.
    pub(crate) path: Vec<String>,
    /// The property's type.
    pub(crate) kind: ParamKind,
}

impl HeaderParam {
    /// The annotated argument in the call's `arguments`, when present and not null.
    pub(crate) fn argument<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        self.path
            .iter()
            .try_fold(arguments, |v, k| v.get(k))
            .filter(|v| !v.is_null())
    }
}

const KEYWORD: &str = "x-mcp-header";

/// Subschema keywords other than `properties`: an annotation below any of them is invalid.
const NESTED: &[&str] = &[
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
    "dependentSchemas",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Finds every `x-mcp-header` in `schema` and checks the rules; returns the mirrored params.
pub(crate) fn header_params(schema: &JsonObject) -> Result<Vec<HeaderParam>, String> {
    let mut out = Vec::new();
    walk(schema, true, &mut Vec::new(), &mut out)?;
    let mut seen = std::collections::HashSet::new();
    for p in &out {
        if !seen.insert(p.lower.clone()) {
            return Err(format!(
                "x-mcp-header {:?} is used twice (names compare case-insensitively)",
                p.name
            ));
        }
    }
    Ok(out)
}

fn walk(
    node: &JsonObject,
    reachable: bool,
    path: &mut Vec<String>,
    out: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    if let Some(v) = node.get(KEYWORD) {
        let at = if path.is_empty() {
            "/".to_owned()
        } else {
            format!("/{}", path.join("/"))
        };
        if !reachable || path.is_empty() {
            return Err(format!(
                "x-mcp-header at {at} must be on a property reached from the root through `properties` alone"
            ));
        }
        let name = v
            .as_str()
            .ok_or_else(|| format!("x-mcp-header at {at} must be a string"))?;
        if name.is_empty() || !name.chars().all(is_tchar) {
            return Err(format!(
                "x-mcp-header {name:?} at {at} must be a non-empty HTTP token"
            ));
        }
        let kind = match node.get("type").and_then(Value::as_str) {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            _ => {
                return Err(format!(
                    "x-mcp-header {name:?} at {at} must annotate a property of type string, integer or boolean"
                ));
            }
        };
        out.push(HeaderParam {
            name: name.to_owned(),
            lower: name.to_ascii_lowercase(),
            path: path.clone(),
            kind,
        });
    }
    if let Some(Value::Object(props)) = node.get("properties") {
        for (k, child) in props {
            if let Value::Object(child) = child {
                path.push(k.clone());
                walk(child, reachable, path, out)?;
                path.pop();
            }
        }
    }
    for key in NESTED {
        match node.get(*key) {
            Some(Value::Object(o))
                if matches!(
                    *key,
                    "$defs" | "definitions" | "patternProperties" | "dependentSchemas"
                ) =>
            {
                for child in o.values().filter_map(Value::as_object) {
                    walk(child, false, path, out)?;
                }
            }
            Some(Value::Object(o)) => walk(o, false, path, out)?,
            Some(Value::Array(a)) => {
                for child in a.iter().filter_map(Value::as_object) {
                    walk(child, false, path, out)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: Value) -> Result<Vec<HeaderParam>, String> {
        header_params(v.as_object().unwrap())
    }

    #[test]
    fn accepts_properties_chain() {
        let p = check(json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}
        }}))
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p.iter().find(|p| p.name == "N").unwrap().path,
            vec!["opts", "n"]
        );
    }

    #[test]
    fn rejects_broken_annotations() {
        for bad in [
            json!({"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\u{1}"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}),
            json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"type":"object","properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}),
            json!({"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}),
            json!({"type":"object","x-mcp-header":"Root"}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":5}}}),
        ] {
            assert!(check(bad.clone()).is_err(), "{bad}");
        }
    }
}

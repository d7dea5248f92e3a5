//! What a sealed state is bound to ([`Binding`]): the method, a digest of the request's
//! target and canonical arguments, and a digest of the caller; and [`PendingBinding`], its
//! ingredients kept until a binding is actually needed.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::handler::Principal;

/// What a sealed state is bound to: the request it belongs to and its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    pub(super) digest: String,
    pub(super) principal: Option<String>,
}

pub(crate) fn digest16(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    URL_SAFE_NO_PAD.encode(&h.finalize()[..16])
}

/// Writes `value` as JSON with object keys sorted, whatever map order serde_json keeps.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

impl Binding {
    /// Binds to `method`, the request's name or URI, its arguments and its caller.
    #[cfg(test)]
    pub(super) fn new(
        method: &'static str,
        target: &str,
        arguments: &Value,
        principal: Option<&Principal>,
    ) -> Self {
        Self::for_caller(
            method,
            target.as_bytes(),
            arguments,
            principal.map(Principal::binding).as_deref(),
        )
    }

    /// Binds to `method`, the request's name or URI, its arguments and its caller (given by
    /// its [`Principal::binding`]).
    fn for_caller(
        method: &'static str,
        target: &[u8],
        arguments: &Value,
        caller: Option<&str>,
    ) -> Self {
        let mut args = String::new();
        canonical(arguments, &mut args);
        Binding {
            method,
            digest: digest16(&[method.as_bytes(), target, args.as_bytes()]),
            principal: caller.map(|c| digest16(&[c.as_bytes()])),
        }
    }
}

/// What a binding is made of, kept until a binding is actually needed: to open a
/// `requestState` the request carries, or to seal one the handler returns. Most requests need
/// neither, and then the arguments are never canonicalized or hashed.
#[derive(Debug)]
pub(crate) struct PendingBinding {
    pub(crate) method: &'static str,
    /// The request's name or URI (its UTF-8 bytes, often a part of the request body).
    target: bytes::Bytes,
    arguments: PendingArguments,
    /// The caller's [`Principal::binding`] (not the whole principal: its claims are not
    /// needed, and this is made on every request that may seal or open a state).
    caller: Option<String>,
}

/// The arguments of a pending binding.
#[derive(Debug)]
pub(crate) enum PendingArguments {
    /// Already parsed (e.g. prompt arguments, or none for a resource).
    Value(Value),
    /// The raw JSON text of `params.arguments` (absent or `null` mean `{}`).
    Raw(Option<bytes::Bytes>),
}

impl PendingBinding {
    pub(crate) fn new(
        method: &'static str,
        target: bytes::Bytes,
        arguments: PendingArguments,
        principal: Option<&Principal>,
    ) -> Self {
        PendingBinding {
            method,
            target,
            arguments,
            caller: principal.map(Principal::binding),
        }
    }

    /// The binding: canonical arguments and digests, computed now.
    pub(crate) fn resolve(&self) -> Binding {
        let parsed;
        let arguments = match &self.arguments {
            PendingArguments::Value(v) => v,
            PendingArguments::Raw(raw) => {
                parsed = match raw.as_deref().map(serde_json::from_slice::<Value>) {
                    Some(Ok(v)) if !v.is_null() => v,
                    _ => Value::Object(serde_json::Map::new()),
                };
                &parsed
            }
        };
        Binding::for_caller(self.method, &self.target, arguments, self.caller.as_deref())
    }
}

/// The binding the seal tests use: a `tools/call` of `book` with nested arguments.
#[cfg(test)]
pub(super) fn example() -> Binding {
    Binding::new(
        "tools/call",
        "book",
        &serde_json::json!({"b": 1, "a": [1, {"y": 2, "x": 1}]}),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use super::example as binding;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let mut out = String::new();
        canonical(&json!({"b": [{"z": 1, "y": "é"}], "a": null}), &mut out);
        assert_eq!(out, r#"{"a":null,"b":[{"y":"é","z":1}]}"#);
    }

    #[test]
    fn digests_separate_their_parts() {
        assert_ne!(digest16(&[b"ab", b"c"]), digest16(&[b"a", b"bc"]));
        assert_eq!(digest16(&[b"x"]).len(), 22);
    }

    #[test]
    fn pending_bindings_resolve_like_eager_ones() {
        let raw = |t: &str| PendingArguments::Raw(Some(bytes::Bytes::from(t.to_owned())));
        let pending =
            |args| PendingBinding::new("tools/call", "book".as_bytes().into(), args, None);
        assert_eq!(
            pending(raw(r#"{"a": [1, {"x": 1, "y": 2}], "b": 1}"#)).resolve(),
            binding()
        );
        let empty = Binding::new("tools/call", "book", &json!({}), None);
        for args in [PendingArguments::Raw(None), raw("null"), raw("{}")] {
            assert_eq!(pending(args).resolve(), empty);
        }
        assert_eq!(
            pending(PendingArguments::Value(
                json!({"b": 1, "a": [1, {"y": 2, "x": 1}]})
            ))
            .resolve(),
            binding()
        );
    }
}

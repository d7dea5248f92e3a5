//! From token claims (a JWT's payload, or an introspection response) to a [`Principal`].

use serde_json::{Map, Value};

use crate::handler::Principal;

/// Granted scopes: `scope` (space-separated, RFC 8693 / RFC 9068) or `scp` (a list or a
/// space-separated string, as some issuers send it).
pub(crate) fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let split = |s: &str| s.split_ascii_whitespace().map(str::to_owned).collect();
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => split(s),
        (_, Some(Value::String(s))) => split(s),
        (_, Some(Value::Array(a))) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The principal the claims describe.
pub(crate) fn principal(claims: Map<String, Value>) -> Principal {
    let text = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut p = Principal::default().with_scopes(scopes(&claims));
    p.issuer = text("iss");
    p.subject = text("sub");
    p.client_id = text("client_id").or_else(|| text("azp"));
    p.with_claims(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn reads_scopes_and_identity() {
        let p = principal(map(
            json!({"iss":"i","sub":"s","azp":"c","scope":"a  b","aud":["x","r"]}),
        ));
        assert_eq!(p.scopes, ["a", "b"]);
        assert_eq!(p.client_id.as_deref(), Some("c"));
        assert_eq!(p.issuer.as_deref(), Some("i"));
        assert_eq!(p.claims["sub"], "s");
        assert_eq!(scopes(&map(json!({"scp":["x","y"]}))), ["x", "y"]);
        assert!(scopes(&map(json!({}))).is_empty());
    }
}

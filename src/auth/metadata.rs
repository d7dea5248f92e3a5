//! RFC 9728 Protected Resource Metadata: the document, where it is served (the root
//! well-known URI and the one suffixed with the resource's path), and the URL challenges
//! point at. Served without authentication.

use axum::Router;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use http::{HeaderValue, header};
use oauth2::url::Url;
use serde_json::{Value, json};

/// The well-known path prefix of RFC 9728.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The document for `resource`, naming `issuer` and the supported scopes
/// (`offline_access` never appears).
pub(crate) fn document(resource: &str, issuer: Option<&str>, scopes: &[String]) -> Value {
    let scopes: Vec<&str> = scopes
        .iter()
        .map(String::as_str)
        .filter(|s| *s != "offline_access")
        .collect();
    let mut doc = json!({
        "resource": resource,
        "authorization_servers": issuer.into_iter().collect::<Vec<_>>(),
        "bearer_methods_supported": ["header"],
    });
    if !scopes.is_empty() {
        doc["scopes_supported"] = json!(scopes);
    }
    doc
}

/// Adds the DPoP members (RFC 9449 §5.1): the proof algorithms
/// accepted, and whether only DPoP-bound tokens are.
pub(crate) fn add_dpop(doc: &mut Value, algorithms: &[&str], required: bool) {
    doc["dpop_signing_alg_values_supported"] = json!(algorithms);
    doc["dpop_bound_access_tokens_required"] = json!(required);
}

/// The paths the document is served at: the path-suffixed form for the resource's path,
/// then the root form.
pub(crate) fn paths(resource: &Url) -> Vec<String> {
    let suffix = resource.path().trim_end_matches('/');
    let mut out = vec![format!("{WELL_KNOWN}{suffix}")];
    if !suffix.is_empty() {
        out.push(WELL_KNOWN.to_owned());
    }
    out
}

/// The URL a challenge's `resource_metadata` names: the path-suffixed well-known URI.
pub(crate) fn url(resource: &Url) -> String {
    format!(
        "{}{}",
        resource.origin().ascii_serialization(),
        paths(resource)[0]
    )
}

/// A router serving `body` at every path of `paths`.
pub(crate) fn router<S>(paths: &[String], body: Bytes) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let mut router = Router::new();
    for path in paths {
        let body = body.clone();
        router = router.route(
            path,
            get(move || {
                let body = body.clone();
                async move { serve(body) }
            }),
        );
    }
    router
}

fn serve(body: Bytes) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    // Browser-based clients read it cross-origin.
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_it_lives() {
        let r = Url::parse("https://mcp.example.com/mcp").unwrap();
        assert_eq!(
            paths(&r),
            [format!("{WELL_KNOWN}/mcp"), WELL_KNOWN.to_owned()]
        );
        assert_eq!(
            url(&r),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let root = Url::parse("https://mcp.example.com:8443").unwrap();
        assert_eq!(paths(&root), [WELL_KNOWN]);
        assert_eq!(
            url(&root),
            "https://mcp.example.com:8443/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn document_never_lists_offline_access() {
        let d = document(
            "https://r/mcp",
            Some("https://as"),
            &["mcp".into(), "offline_access".into()],
        );
        assert_eq!(d["scopes_supported"], json!(["mcp"]));
        assert_eq!(d["authorization_servers"], json!(["https://as"]));
        assert_eq!(d["bearer_methods_supported"], json!(["header"]));
    }
}

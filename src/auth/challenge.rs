//! Refusals: `401` with a `WWW-Authenticate: Bearer` challenge for a missing or invalid
//! token, `403` with `error="insufficient_scope"` for missing scopes, `400` for a malformed
//! request (RFC 6750 §3), each with an OAuth-style JSON body.

use std::borrow::Cow;

use http::{HeaderValue, Response, StatusCode, header};
use serde_json::json;

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// No bearer token: `401`, a challenge without an error code (RFC 6750 §3.1).
    Missing,
    /// A malformed request (token in the query, repeated or malformed header): `400`.
    InvalidRequest,
    /// The token is expired, revoked, malformed, for another resource…: `401`.
    InvalidToken,
    /// The token lacks a scope the operation needs: `403`.
    InsufficientScope,
}

/// A refusal and what to tell the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    kind: Kind,
    description: Cow<'static, str>,
}

impl Rejection {
    pub(crate) fn missing() -> Self {
        Rejection {
            kind: Kind::Missing,
            description: "This resource requires a bearer token in the Authorization header".into(),
        }
    }

    pub(crate) fn invalid_request(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            kind: Kind::InvalidRequest,
            description: description.into(),
        }
    }

    pub(crate) fn invalid_token(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            kind: Kind::InvalidToken,
            description: description.into(),
        }
    }

    pub(crate) fn insufficient_scope(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            kind: Kind::InsufficientScope,
            description: description.into(),
        }
    }

    #[cfg(test)]
    pub(crate) fn is_missing(&self) -> bool {
        self.kind == Kind::Missing
    }

    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// The `reason` label of `mcp_auth_failures_total`.
    pub(crate) fn reason(&self) -> &'static str {
        match self.kind {
            Kind::Missing => "missing_token",
            Kind::InvalidRequest => "invalid_request",
            Kind::InvalidToken => "invalid_token",
            Kind::InsufficientScope => "insufficient_scope",
        }
    }

    pub(crate) fn description(&self) -> &str {
        &self.description
    }

    fn status(&self) -> StatusCode {
        match self.kind {
            Kind::Missing | Kind::InvalidToken => StatusCode::UNAUTHORIZED,
            Kind::InvalidRequest => StatusCode::BAD_REQUEST,
            Kind::InsufficientScope => StatusCode::FORBIDDEN,
        }
    }

    fn error_code(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Missing => None,
            Kind::InvalidRequest => Some("invalid_request"),
            Kind::InvalidToken => Some("invalid_token"),
            Kind::InsufficientScope => Some("insufficient_scope"),
        }
    }

    /// The `WWW-Authenticate` value: `resource_metadata` always; `scope` (every scope the
    /// operation needs, never `offline_access`) when there are any.
    pub(crate) fn challenge(&self, metadata_url: &str, scopes: &[String]) -> String {
        let mut params: Vec<String> = Vec::new();
        if let Some(code) = self.error_code() {
            params.push(format!("error=\"{code}\""));
        }
        let scope = scope_value(scopes);
        if self.kind == Kind::InsufficientScope {
            params.push(format!("scope=\"{scope}\""));
        }
        params.push(format!("resource_metadata=\"{}\"", quoted(metadata_url)));
        if self.kind != Kind::InsufficientScope && !scope.is_empty() {
            params.push(format!("scope=\"{scope}\""));
        }
        if self.kind != Kind::Missing {
            params.push(format!(
                "error_description=\"{}\"",
                quoted(&self.description)
            ));
        }
        format!("Bearer {}", params.join(", "))
    }

    /// The HTTP response.
    pub(crate) fn into_response<B: From<String>>(
        self,
        metadata_url: &str,
        scopes: &[String],
    ) -> Response<B> {
        let challenge = self.challenge(metadata_url, scopes);
        let body = json!({
            "error": self.error_code().unwrap_or("invalid_token"),
            "error_description": self.description,
        });
        let mut response = Response::new(B::from(body.to_string()));
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            headers.insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }
}

/// Space-separated scopes for a challenge, without repeats and without `offline_access`.
pub(crate) fn scope_value(scopes: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for s in scopes {
        if s != "offline_access" && !seen.contains(&s.as_str()) && is_scope_token(s) {
            seen.push(s);
        }
    }
    seen.join(" ")
}

/// RFC 6749 `scope-token`: `%x21 / %x23-5B / %x5D-7E`.
pub(crate) fn is_scope_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// A value safe inside a quoted-string: printable ASCII without `"` and `\`.
fn quoted(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_ascii() && !c.is_ascii_control() => c,
            _ => '?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn challenges() {
        assert_eq!(
            Rejection::missing().challenge(URL, &s(&["mcp", "offline_access"])),
            format!("Bearer resource_metadata=\"{URL}\", scope=\"mcp\"")
        );
        assert_eq!(
            Rejection::invalid_token("expired \"x\"").challenge(URL, &[]),
            format!(
                "Bearer error=\"invalid_token\", resource_metadata=\"{URL}\", error_description=\"expired 'x'\""
            )
        );
        assert_eq!(
            Rejection::insufficient_scope("d").challenge(URL, &s(&["a", "b", "a"])),
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"a b\", resource_metadata=\"{URL}\", error_description=\"d\""
            )
        );
    }

    #[test]
    fn responses() {
        let r: Response<String> = Rejection::insufficient_scope("d").into_response(URL, &s(&["a"]));
        assert_eq!(r.status(), 403);
        let body: serde_json::Value = serde_json::from_str(r.body()).unwrap();
        assert_eq!(body["error"], "insufficient_scope");
        let r: Response<String> = Rejection::invalid_request("q").into_response(URL, &[]);
        assert_eq!(r.status(), 400);
        let r: Response<String> = Rejection::missing().into_response(URL, &[]);
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["cache-control"], "no-store");
    }

    #[test]
    fn scope_tokens() {
        assert!(is_scope_token("files:read"));
        assert!(!is_scope_token("a b"));
        assert!(!is_scope_token("a\"b"));
        assert!(!is_scope_token(""));
    }
}

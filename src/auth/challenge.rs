//! Refusals: `401` with a `WWW-Authenticate: Bearer` challenge for a missing or invalid
//! token, `403` with `error="insufficient_scope"` for missing scopes, `400` for a malformed
//! request (RFC 6750 §3), each with an OAuth-style JSON body. With DPoP on, challenges of
//! the `DPoP` scheme (RFC 9449 §7.1) name the accepted algorithms (`algs`) and carry
//! `invalid_dpop_proof` or `use_dpop_nonce` (with a `DPoP-Nonce` header) when the proof is
//! at fault.

use std::borrow::Cow;

use http::{HeaderValue, Response, StatusCode, header};
use serde_json::json;

/// The `DPoP-Nonce` response header (RFC 9449 §8).
pub(crate) const DPOP_NONCE: http::HeaderName = http::HeaderName::from_static("dpop-nonce");

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
    /// The DPoP proof is malformed, badly signed, not for this request, or replayed: `401`.
    InvalidDpopProof,
    /// The DPoP proof lacks a valid server nonce: `401` with a fresh `DPoP-Nonce`.
    UseDpopNonce,
    /// A store the check needs cannot be reached: `503`.
    Unavailable,
}

/// The scheme a request used, which its refusal's challenge answers in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `Authorization: Bearer`, or none.
    Bearer,
    /// `Authorization: DPoP`.
    Dpop,
}

/// What the DPoP challenge says, when DPoP is on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DpopChallenge<'a> {
    /// `algs`: the accepted proof algorithms, space-separated.
    pub(crate) algs: &'a str,
    /// Bearer tokens are refused.
    pub(crate) required: bool,
}

/// Everything a refusal's response names besides the refusal.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Context<'a> {
    pub(crate) metadata_url: &'a str,
    /// The scopes the operation needs.
    pub(crate) scopes: &'a [String],
    pub(crate) dpop: Option<DpopChallenge<'a>>,
}

/// A refusal and what to tell the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    kind: Kind,
    description: Cow<'static, str>,
    scheme: Scheme,
    /// A `DPoP-Nonce` to send.
    nonce: Option<String>,
}

impl Rejection {
    pub(crate) fn missing() -> Self {
        Rejection {
            kind: Kind::Missing,
            description: "This resource requires a bearer token in the Authorization header".into(),
            scheme: Scheme::Bearer,
            nonce: None,
        }
    }

    pub(crate) fn invalid_request(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            kind: Kind::InvalidRequest,
            description: description.into(),
            scheme: Scheme::Bearer,
            nonce: None,
        }
    }

    pub(crate) fn invalid_token(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            kind: Kind::InvalidToken,
            description: description.into(),
            scheme: Scheme::Bearer,
            nonce: None,
        }
    }

    pub(crate) fn insufficient_scope(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            kind: Kind::InsufficientScope,
            description: description.into(),
            scheme: Scheme::Bearer,
            nonce: None,
        }
    }

    fn of(kind: Kind, description: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            kind,
            description: description.into(),
            scheme: Scheme::Dpop,
            nonce: None,
        }
    }

    pub(crate) fn invalid_dpop_proof(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection::of(Kind::InvalidDpopProof, description)
    }

    pub(crate) fn use_dpop_nonce(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection::of(Kind::UseDpopNonce, description)
    }

    pub(crate) fn unavailable(description: impl Into<Cow<'static, str>>) -> Self {
        Rejection::of(Kind::Unavailable, description)
    }

    /// The same refusal, answered in `scheme`'s challenge.
    pub(crate) fn in_scheme(mut self, scheme: Scheme) -> Self {
        self.scheme = scheme;
        self
    }

    /// Sends `nonce` in a `DPoP-Nonce` header.
    pub(crate) fn with_nonce(mut self, nonce: Option<String>) -> Self {
        self.nonce = nonce;
        self
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
            Kind::InvalidDpopProof => "invalid_dpop_proof",
            Kind::UseDpopNonce => "use_dpop_nonce",
            Kind::Unavailable => "unavailable",
        }
    }

    pub(crate) fn description(&self) -> &str {
        &self.description
    }

    fn status(&self) -> StatusCode {
        match self.kind {
            Kind::Missing | Kind::InvalidToken | Kind::InvalidDpopProof | Kind::UseDpopNonce => {
                StatusCode::UNAUTHORIZED
            }
            Kind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
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
            Kind::InvalidDpopProof => Some("invalid_dpop_proof"),
            Kind::UseDpopNonce => Some("use_dpop_nonce"),
            Kind::Unavailable => Some("temporarily_unavailable"),
        }
    }

    /// The `WWW-Authenticate` value: `resource_metadata` always; `scope` (every scope the
    /// operation needs, never `offline_access`) when there are any.
    pub(crate) fn challenge(&self, metadata_url: &str, scopes: &[String]) -> String {
        self.scheme_challenge("Bearer", None, true, metadata_url, scopes)
    }

    /// One challenge of `scheme` (with `algs` first for DPoP), with or without the error.
    fn scheme_challenge(
        &self,
        scheme: &str,
        algs: Option<&str>,
        with_error: bool,
        metadata_url: &str,
        scopes: &[String],
    ) -> String {
        let mut params: Vec<String> = Vec::new();
        if let Some(algs) = algs {
            params.push(format!("algs=\"{algs}\""));
        }
        if let Some(code) = self.error_code().filter(|_| with_error) {
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
        if self.kind != Kind::Missing && with_error {
            params.push(format!(
                "error_description=\"{}\"",
                quoted(&self.description)
            ));
        }
        format!("{scheme} {}", params.join(", "))
    }

    /// The `WWW-Authenticate` values: the Bearer challenge alone without DPoP; with DPoP,
    /// the challenge of the scheme the request used carries the error, and a request
    /// without a token (or with a bearer token) also learns the other scheme it may use.
    pub(crate) fn challenges(&self, ctx: &Context<'_>) -> Vec<String> {
        let Some(dpop) = ctx.dpop else {
            return vec![self.challenge(ctx.metadata_url, ctx.scopes)];
        };
        let dpop_errs = self.scheme == Scheme::Dpop || dpop.required;
        let dpop_challenge = self.scheme_challenge(
            "DPoP",
            Some(dpop.algs),
            dpop_errs,
            ctx.metadata_url,
            ctx.scopes,
        );
        if dpop.required || self.scheme == Scheme::Dpop {
            return vec![dpop_challenge];
        }
        vec![self.challenge(ctx.metadata_url, ctx.scopes), dpop_challenge]
    }

    /// The HTTP response.
    pub(crate) fn into_response<B: From<String>>(self, ctx: &Context<'_>) -> Response<B> {
        let challenges = if self.kind == Kind::Unavailable {
            Vec::new()
        } else {
            self.challenges(ctx)
        };
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
        for challenge in challenges {
            if let Ok(v) = HeaderValue::from_str(&challenge) {
                headers.append(header::WWW_AUTHENTICATE, v);
            }
        }
        if let Some(v) = self.nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
            headers.insert(DPOP_NONCE, v);
        }
        if self.kind == Kind::Unavailable {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
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
        let ctx = |scopes| Context {
            metadata_url: URL,
            scopes,
            dpop: None,
        };
        let a = s(&["a"]);
        let r: Response<String> = Rejection::insufficient_scope("d").into_response(&ctx(&a));
        assert_eq!(r.status(), 403);
        let body: serde_json::Value = serde_json::from_str(r.body()).unwrap();
        assert_eq!(body["error"], "insufficient_scope");
        let r: Response<String> = Rejection::invalid_request("q").into_response(&ctx(&[]));
        assert_eq!(r.status(), 400);
        let r: Response<String> = Rejection::missing().into_response(&ctx(&[]));
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["cache-control"], "no-store");
    }

    #[test]
    fn dpop_challenges() {
        let dpop = |required| Context {
            metadata_url: URL,
            scopes: &[],
            dpop: Some(DpopChallenge {
                algs: "ES256 EdDSA",
                required,
            }),
        };
        assert_eq!(
            Rejection::missing().challenges(&dpop(false)),
            [
                format!("Bearer resource_metadata=\"{URL}\""),
                format!("DPoP algs=\"ES256 EdDSA\", resource_metadata=\"{URL}\"")
            ]
        );
        assert_eq!(
            Rejection::invalid_dpop_proof("bad htu").challenges(&dpop(false)),
            [format!(
                "DPoP algs=\"ES256 EdDSA\", error=\"invalid_dpop_proof\", resource_metadata=\"{URL}\", error_description=\"bad htu\""
            )]
        );
        assert_eq!(
            Rejection::invalid_token("bound").challenges(&dpop(true)),
            [format!(
                "DPoP algs=\"ES256 EdDSA\", error=\"invalid_token\", resource_metadata=\"{URL}\", error_description=\"bound\""
            )]
        );
        let r: Response<String> = Rejection::use_dpop_nonce("nonce")
            .with_nonce(Some("n1".into()))
            .into_response(&dpop(false));
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["dpop-nonce"], "n1");
        let body: serde_json::Value = serde_json::from_str(r.body()).unwrap();
        assert_eq!(body["error"], "use_dpop_nonce");
        let r: Response<String> = Rejection::unavailable("down").into_response(&dpop(false));
        assert_eq!(r.status(), 503);
    }

    #[test]
    fn scope_tokens() {
        assert!(is_scope_token("files:read"));
        assert!(!is_scope_token("a b"));
        assert!(!is_scope_token("a\"b"));
        assert!(!is_scope_token(""));
    }
}

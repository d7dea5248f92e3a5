//! The authenticated caller of a request.

use serde_json::{Map, Value};

/// Who made a request, as established by an authentication layer (for example the OAuth 2.1
/// resource-server middleware in `auth`).
///
/// An authentication layer puts a `Principal` into the HTTP request's extensions; handlers
/// read it with [`RequestContext::principal`](crate::RequestContext::principal), and the
/// server binds it into sealed `requestState` so a state minted for one caller cannot be
/// replayed by another. No token is ever kept here.
///
/// ```
/// use stateless_mcp::handler::Principal;
///
/// // What an authentication layer of your own would insert into the request's extensions.
/// let who = Principal::new("user-42")
///     .with_issuer("https://auth.example.com")
///     .with_scopes(["files:read", "mcp"]);
/// assert!(who.has_scope("files:read"));
/// assert_eq!(who.subject.as_deref(), Some("user-42"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// The token's issuer (`iss`), when known.
    pub issuer: Option<String>,
    /// The subject (`sub`): the user or service the token was issued for.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id` or `azp`).
    pub client_id: Option<String>,
    /// The scopes granted to the token.
    pub scopes: Vec<String>,
    /// Every claim of the token (or introspection response), for application checks.
    pub claims: Map<String, Value>,
}

impl Principal {
    /// A principal with the given subject and nothing else.
    pub fn new(subject: impl Into<String>) -> Self {
        Principal {
            subject: Some(subject.into()),
            ..Principal::default()
        }
    }

    /// Sets the issuer.
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the client id.
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the granted scopes.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the claims.
    #[must_use]
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// Whether the token was granted `scope` (exact match).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// A stable identity for binding state to this caller: issuer, subject and client id.
    pub fn binding(&self) -> String {
        format!(
            "{}\u{1f}{}\u{1f}{}",
            self.issuer.as_deref().unwrap_or(""),
            self.subject.as_deref().unwrap_or(""),
            self.client_id.as_deref().unwrap_or("")
        )
    }
}

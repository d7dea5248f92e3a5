//! [`ResourceServer`]: the settings and state of the OAuth 2.1 resource server, and its
//! builder.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use bytes::Bytes;
use http::{HeaderMap, Method, Uri};
use oauth2::url::Url;

use super::cache::TokenCache;
use super::challenge::{self, DpopChallenge, Rejection, Scheme};
use super::discovery::Discovery;
use super::dpop::{self, Dpop, DpopCheck};
use super::introspection::{self, Introspector};
use super::jwks::{KeySource, KeyStore};
use super::jwt::{self, JwtVerifier};
use super::scopes::ScopeRules;
use super::{Algorithm, bearer, metadata, transport_policy};
use crate::Error;
use crate::handler::Principal;
use crate::handler::{ScopeHierarchy, ScopeRequirements};

/// An OAuth 2.1 resource server: validates bearer tokens (JWTs against the issuer's keys,
/// opaque tokens by introspection), checks scopes, and serves RFC 9728 metadata.
///
/// Cheap to clone. Build one with [`ResourceServer::builder`], then wrap the MCP routes with
/// [`ResourceServer::protect`] (or apply [`ResourceServer::layer`] and merge
/// [`ResourceServer::metadata_router`] yourself).
#[derive(Clone)]
pub struct ResourceServer {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    resource: String,
    issuer: Option<String>,
    pub(crate) metadata_url: String,
    metadata_paths: Vec<String>,
    metadata_body: Bytes,
    pub(crate) rules: ScopeRules,
    pub(crate) hierarchy: ScopeHierarchy,
    jwt: Option<JwtVerifier>,
    introspection: Option<Introspector>,
    pub(crate) dpop: Option<DpopCheck>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.inner.resource)
            .field("issuer", &self.inner.issuer)
            .field("jwt", &self.inner.jwt)
            .field("introspection", &self.inner.introspection)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// Starts building the resource server for `resource`: this server's canonical resource
    /// identifier (RFC 8707), e.g. `https://mcp.example.com/mcp`, which every token's
    /// audience must include.
    pub fn builder(resource: impl Into<String>) -> ResourceServerBuilder {
        ResourceServerBuilder::new(resource.into())
    }

    /// A router serving the RFC 9728 metadata, without authentication, at
    /// `/.well-known/oauth-protected-resource` and at the same path suffixed with the
    /// resource's path (e.g. `/.well-known/oauth-protected-resource/mcp`).
    pub fn metadata_router<S>(&self) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        metadata::router(&self.inner.metadata_paths, self.inner.metadata_body.clone())
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The URL that `WWW-Authenticate` challenges name in `resource_metadata`.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The RFC 9728 metadata document.
    pub fn metadata(&self) -> serde_json::Value {
        serde_json::from_slice(&self.inner.metadata_body).unwrap_or_default()
    }

    /// What a refusal's challenges name: the metadata URL, the scopes `required`, DPoP.
    pub(crate) fn challenge_context<'a>(
        &'a self,
        required: &'a [String],
    ) -> challenge::Context<'a> {
        challenge::Context {
            metadata_url: &self.inner.metadata_url,
            scopes: required,
            dpop: self.inner.dpop.as_ref().map(|d| DpopChallenge {
                algs: &d.algs,
                required: d.required,
            }),
        }
    }

    /// Validates a request's token (and its DPoP proof, when it comes with one) and checks
    /// it has every scope in `required`.
    pub(crate) async fn authorize(
        &self,
        headers: &HeaderMap,
        method: &Method,
        uri: &Uri,
        required: &[String],
    ) -> Result<Principal, Rejection> {
        let dpop = self.inner.dpop.as_ref();
        let (scheme, token) = bearer::credential(headers, uri)?;
        let principal = match (scheme, dpop) {
            (Scheme::Bearer, None) => self.verify(token).await?,
            (Scheme::Dpop, None) => return Err(Rejection::missing()),
            (Scheme::Bearer, Some(d)) if d.required => {
                return Err(Rejection::invalid_token(
                    "This resource accepts DPoP-bound tokens only (Authorization: DPoP)",
                ));
            }
            (Scheme::Bearer, Some(_)) => {
                let principal = self.verify(token).await?;
                if dpop::bound_key(&principal).is_some() {
                    return Err(Rejection::invalid_token(
                        "The token is bound to a DPoP key: present it with its proof \
                         (Authorization: DPoP)",
                    ));
                }
                principal
            }
            (Scheme::Dpop, Some(d)) => {
                let fail = |r: Rejection| {
                    let nonce = (r.kind() == challenge::Kind::UseDpopNonce)
                        .then(|| d.current_nonce())
                        .flatten();
                    r.in_scheme(Scheme::Dpop).with_nonce(nonce)
                };
                let pending = d.check_proof(headers, method, uri, token).map_err(fail)?;
                let principal = self.verify(token).await.map_err(fail)?;
                d.bind(pending, &principal).await.map_err(fail)?;
                principal
            }
        };
        let missing = self.inner.hierarchy.missing(&principal.scopes, required);
        if !missing.is_empty() {
            return Err(Rejection::insufficient_scope(format!(
                "This operation needs the scope(s): {}",
                missing.join(" ")
            ))
            .in_scheme(scheme));
        }
        Ok(principal)
    }

    /// Validates a bearer token on its own, without scope checks: a JWT against the
    /// issuer's keys, anything else by introspection.
    pub async fn verify_token(&self, token: &str) -> Option<Principal> {
        self.verify(token).await.ok()
    }

    async fn verify(&self, token: &str) -> Result<Principal, Rejection> {
        match (&self.inner.jwt, &self.inner.introspection) {
            (Some(j), _) if jwt::looks_like_jwt(token) => j.verify(token).await,
            (_, Some(i)) => i.verify(token).await,
            _ => Err(Rejection::invalid_token("The token is malformed")),
        }
    }
}

/// Builds a [`ResourceServer`]; [`ResourceServerBuilder::build`] checks the settings.
///
/// Defaults: JWTs signed with RS256/384/512, PS256/384/512, ES256/384 or EdDSA; 60 s of
/// clock leeway; keys refreshed on an unknown `kid` at most every 30 s and in the
/// background at least every 5 min; verified JWTs remembered for at most 60 s and
/// introspection answers for at most 5 min (10 000 entries each); colon-separated scope hierarchy; 10 s HTTP timeout.
///
/// ```
/// use std::time::Duration;
/// use stateless_mcp::auth::{Algorithm, ResourceServer};
/// use stateless_mcp::handler::ScopeHierarchy;
///
/// let auth = ResourceServer::builder("https://mcp.example.com/mcp")
///     .issuer("https://auth.example.com")
///     .algorithms([Algorithm::RS256, Algorithm::ES256])
///     .leeway(Duration::from_secs(30))
///     .required_scopes(["mcp"])
///     .method_scopes("tools/call", ["mcp:tools"])
///     .hierarchy(ScopeHierarchy::default().implies("admin", "mcp"))
///     .build()
///     .unwrap();
/// # drop(auth);
/// ```
#[must_use]
#[derive(Clone)]
pub struct ResourceServerBuilder {
    resource: String,
    issuer: Option<String>,
    jwks_uri: Option<String>,
    introspection_client: Option<(String, Option<String>)>,
    introspection_endpoint: Option<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    every_request: Vec<String>,
    by_method: HashMap<String, Vec<String>>,
    operations: Arc<dyn ScopeRequirements>,
    hierarchy: ScopeHierarchy,
    scopes_supported: Option<Vec<String>>,
    min_refresh: Duration,
    max_refresh: Duration,
    introspection_ttl: Duration,
    introspection_capacity: usize,
    jwt_ttl: Duration,
    jwt_capacity: usize,
    http_timeout: Duration,
    allow_http: bool,
    dpop: Option<Dpop>,
}

impl std::fmt::Debug for ResourceServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServerBuilder")
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

fn strings<I, S>(items: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    items.into_iter().map(Into::into).collect()
}

fn parse_url(what: &str, value: &str) -> Result<Url, Error> {
    let url = Url::parse(value)
        .map_err(|e| Error::invalid_definition(format!("{what} {value:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(Error::invalid_definition(format!(
            "{what} {value:?} must be an https (or http) URL"
        )));
    }
    if url.fragment().is_some() {
        return Err(Error::invalid_definition(format!(
            "{what} {value:?} must not have a fragment"
        )));
    }
    Ok(url)
}

impl ResourceServerBuilder {
    fn new(resource: String) -> Self {
        ResourceServerBuilder {
            resource,
            issuer: None,
            jwks_uri: None,
            introspection_client: None,
            introspection_endpoint: None,
            algorithms: Algorithm::ALL.to_vec(),
            leeway: Duration::from_secs(60),
            every_request: Vec::new(),
            by_method: HashMap::new(),
            operations: Arc::new(()),
            hierarchy: ScopeHierarchy::default(),
            scopes_supported: None,
            min_refresh: Duration::from_secs(30),
            max_refresh: Duration::from_secs(300),
            introspection_ttl: Duration::from_secs(300),
            introspection_capacity: 10_000,
            jwt_ttl: Duration::from_secs(60),
            jwt_capacity: 10_000,
            http_timeout: Duration::from_secs(10),
            allow_http: false,
            dpop: None,
        }
    }

    /// Accepts (or requires) DPoP-bound tokens (RFC 9449) under `policy`; see [`Dpop`].
    /// Default: bearer tokens only, and the `DPoP` scheme is not recognised.
    pub fn dpop(mut self, policy: Dpop) -> Self {
        self.dpop = Some(policy);
        self
    }

    /// The authorization server that issues tokens for this resource. Its metadata
    /// (RFC 8414, or OpenID Connect discovery) tells where its keys are; tokens' `iss` must
    /// equal it.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Takes signing keys from this JWKS URL instead of the issuer's metadata.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.jwks_uri = Some(url.into());
        self
    }

    /// Accepts opaque tokens through RFC 7662 introspection, authenticating as this client
    /// (HTTP Basic with `client_secret`, or only `client_id` without one).
    pub fn introspection(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.introspection_client = Some((client_id.into(), client_secret));
        self
    }

    /// The introspection endpoint (default: the issuer's `introspection_endpoint`).
    pub fn introspection_endpoint(mut self, url: impl Into<String>) -> Self {
        self.introspection_endpoint = Some(url.into());
        self
    }

    /// How long introspection answers are cached at most (never past the token's `exp`),
    /// and how many.
    pub fn introspection_cache(mut self, max_ttl: Duration, capacity: usize) -> Self {
        self.introspection_ttl = max_ttl;
        self.introspection_capacity = capacity;
        self
    }

    /// How long a verified JWT is remembered at most (never past its `exp`; zero turns the
    /// cache off), and how many. A remembered token skips signature and claim checks.
    pub fn jwt_cache(mut self, max_ttl: Duration, capacity: usize) -> Self {
        self.jwt_ttl = max_ttl;
        self.jwt_capacity = capacity;
        self
    }

    /// The JWT algorithms accepted (default: [`Algorithm::ALL`]). Only asymmetric ones
    /// exist: `none` and HMAC cannot be chosen.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// Clock leeway for `exp` and `nbf`.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Scopes every request needs.
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.every_request = strings(scopes);
        self
    }

    /// Scopes every request for `method` (e.g. `tools/call`) needs.
    pub fn method_scopes<I, S>(mut self, method: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.by_method.insert(method.into(), strings(scopes));
        self
    }

    /// Where per-operation scopes come from: usually the [`Server`](crate::Server), whose
    /// tools, prompts and resources declare scopes at registration.
    pub fn operation_scopes(mut self, requirements: impl ScopeRequirements) -> Self {
        self.operations = Arc::new(requirements);
        self
    }

    /// How granted scopes cover required ones (default: colon-separated hierarchy).
    pub fn hierarchy(mut self, hierarchy: ScopeHierarchy) -> Self {
        self.hierarchy = hierarchy;
        self
    }

    /// `scopes_supported` of the metadata (default: every scope the rules mention).
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = Some(strings(scopes));
        self
    }

    /// Refresh the JWKS for an unknown `kid` at most once per `min`; refresh it in the
    /// background at least once per `max` (sooner when its `Cache-Control: max-age` says so).
    pub fn jwks_refresh(mut self, min: Duration, max: Duration) -> Self {
        self.min_refresh = min;
        self.max_refresh = max;
        self
    }

    /// Timeout of requests to the authorization server.
    pub fn http_timeout(mut self, timeout: Duration) -> Self {
        self.http_timeout = timeout;
        self
    }

    /// Accepts `http://` issuer, JWKS and introspection URLs on any host (default: `https://`
    /// only, except on a loopback host). Keys and introspection answers fetched in clear can
    /// be replaced by anyone on the network path: allow this only where that path is trusted.
    /// Applies to the URLs named by the issuer's discovery document too.
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// Checks the settings and builds the resource server. Nothing is fetched yet: the
    /// issuer's metadata and keys are fetched on first use.
    pub fn build(self) -> Result<ResourceServer, Error> {
        let resource_url = parse_url("the resource identifier", &self.resource)?;
        if let Some(i) = &self.issuer {
            let url = parse_url("the issuer", i)?;
            transport_policy::check("the issuer", &url, self.allow_http)
                .map_err(Error::invalid_definition)?;
        }
        for u in self.jwks_uri.iter().chain(&self.introspection_endpoint) {
            let url = parse_url("the endpoint", u)?;
            transport_policy::check("the endpoint", &url, self.allow_http)
                .map_err(Error::invalid_definition)?;
        }
        if self.issuer.is_none() && self.jwks_uri.is_some() {
            return Err(Error::invalid_definition(
                "a JWKS URL needs the issuer too: tokens' iss must be checked",
            ));
        }
        if self.issuer.is_none()
            && (self.introspection_client.is_none() || self.introspection_endpoint.is_none())
        {
            return Err(Error::invalid_definition(
                "the resource server needs an issuer (for JWTs), or an introspection client and endpoint",
            ));
        }
        if self.introspection_endpoint.is_some() && self.introspection_client.is_none() {
            return Err(Error::invalid_definition(
                "an introspection endpoint needs an introspection client id",
            ));
        }
        if self.algorithms.is_empty() {
            return Err(Error::invalid_definition(
                "at least one JWT algorithm must be accepted",
            ));
        }
        let all_rules: Vec<&String> = self
            .every_request
            .iter()
            .chain(self.by_method.values().flatten())
            .collect();
        if let Some(bad) = all_rules.iter().find(|s| !challenge::is_scope_token(s)) {
            return Err(Error::invalid_definition(format!(
                "{bad:?} is not a valid scope"
            )));
        }

        let http = super::http_client::build(self.http_timeout)?;
        let discovery = self.issuer.as_ref().map(|i| {
            Arc::new(Discovery::new(
                http.clone(),
                i.clone(),
                self.min_refresh,
                self.allow_http,
            ))
        });
        let jwt = self.issuer.as_ref().map(|issuer| {
            let source = match (&self.jwks_uri, &discovery) {
                (Some(u), _) => KeySource::Url(u.clone()),
                (None, Some(d)) => KeySource::Discovered(d.clone()),
                (None, None) => unreachable!("an issuer implies discovery"),
            };
            let keys = Arc::new(KeyStore::new(
                http.clone(),
                source,
                self.min_refresh,
                self.max_refresh,
            ));
            JwtVerifier::new(
                keys,
                issuer,
                &self.resource,
                self.algorithms.iter().map(|a| a.to_jwt()).collect(),
                self.leeway.as_secs(),
                TokenCache::new(self.jwt_ttl, self.jwt_capacity),
            )
        });
        let introspection = match &self.introspection_client {
            None => None,
            Some((client_id, client_secret)) => {
                let endpoint = match (&self.introspection_endpoint, &discovery) {
                    (Some(u), _) => introspection::Endpoint::Url(u.clone()),
                    (None, Some(d)) => introspection::Endpoint::Discovered(d.clone()),
                    (None, None) => unreachable!("checked above"),
                };
                Some(Introspector::new(
                    http.clone(),
                    introspection::Settings {
                        endpoint,
                        client_id: client_id.clone(),
                        client_secret: client_secret.clone(),
                        issuer: self.issuer.clone(),
                        resource: self.resource.clone(),
                        leeway: self.leeway,
                        max_ttl: self.introspection_ttl,
                        capacity: self.introspection_capacity,
                    },
                ))
            }
        };
        let rules = ScopeRules {
            every_request: self.every_request,
            by_method: self.by_method,
            operations: self.operations,
        };
        let supported = self
            .scopes_supported
            .unwrap_or_else(|| rules.all(rules.operations.all_scopes()));
        let dpop = match self.dpop {
            None => None,
            Some(policy) => Some(
                DpopCheck::new(policy, resource_url.origin().ascii_serialization()).ok_or_else(
                    || Error::invalid_definition("DPoP needs at least one proof algorithm"),
                )?,
            ),
        };
        let mut doc = metadata::document(&self.resource, self.issuer.as_deref(), &supported);
        if let Some(d) = &dpop {
            metadata::add_dpop(&mut doc, &d.algorithm_names(), d.required);
        }
        Ok(ResourceServer {
            inner: Arc::new(Inner {
                metadata_url: metadata::url(&resource_url),
                metadata_paths: metadata::paths(&resource_url),
                metadata_body: Bytes::from(doc.to_string()),
                resource: self.resource,
                issuer: self.issuer,
                rules,
                hierarchy: self.hierarchy,
                jwt,
                introspection,
                dpop,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_settings_are_refused() {
        let b = || ResourceServer::builder("https://mcp.example.com/mcp");
        assert!(b().build().is_err(), "no issuer, no introspection");
        assert!(
            ResourceServer::builder("not a url")
                .issuer("https://as")
                .build()
                .is_err()
        );
        assert!(
            ResourceServer::builder("https://r/mcp#f")
                .issuer("https://as")
                .build()
                .is_err()
        );
        assert!(b().issuer("ftp://as").build().is_err());
        assert!(
            b().jwks_uri("https://as/jwks").build().is_err(),
            "JWKS without issuer"
        );
        assert!(b().issuer("https://as").algorithms([]).build().is_err());
        assert!(
            b().issuer("https://as")
                .required_scopes(["a b"])
                .build()
                .is_err()
        );
        assert!(b().introspection_endpoint("https://as/i").build().is_err());
        assert!(
            b().introspection("rs", None)
                .introspection_endpoint("https://as/i")
                .build()
                .is_ok(),
            "introspection alone"
        );
        let rs = b()
            .issuer("https://as")
            .required_scopes(["mcp", "offline_access"])
            .build()
            .unwrap();
        assert_eq!(
            rs.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            rs.metadata()["scopes_supported"],
            serde_json::json!(["mcp"])
        );
    }
}

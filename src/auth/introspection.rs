//! Opaque tokens: RFC 7662 introspection through the `oauth2` crate's client, with the
//! answers cached (see [`TokenCache`]).

use std::sync::Arc;
use std::time::Duration;

use oauth2::basic::{
    BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenResponse, BasicTokenType,
};
use oauth2::{
    AccessToken, ClientId, ClientSecret, EndpointNotSet, EndpointSet, ExtraTokenFields,
    IntrospectionUrl, StandardRevocableToken, StandardTokenIntrospectionResponse,
    TokenIntrospectionResponse as _,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::cache::{TokenCache, unix_now};
use super::challenge::Rejection;
use super::claims;
use super::discovery::Discovery;
use super::http_client::{HttpClient, OAuthHttp};
use crate::handler::Principal;

/// Every member of an introspection response beyond the standard ones.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub(crate) struct OtherClaims {
    #[serde(flatten)]
    other: Map<String, Value>,
}

impl ExtraTokenFields for OtherClaims {}

type Response = StandardTokenIntrospectionResponse<OtherClaims, BasicTokenType>;

type IntrospectionClient = oauth2::Client<
    BasicErrorResponse,
    BasicTokenResponse,
    Response,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
>;

/// Where the introspection endpoint is.
#[derive(Debug)]
pub(crate) enum Endpoint {
    /// Configured.
    Url(String),
    /// The `introspection_endpoint` of the issuer's metadata.
    Discovered(Arc<Discovery>),
}

/// Introspects tokens and caches the answers.
pub(crate) struct Introspector {
    http: OAuthHttp,
    endpoint: Endpoint,
    client_id: String,
    client_secret: Option<String>,
    issuer: Option<String>,
    resource: String,
    leeway: Duration,
    cache: TokenCache,
}

impl std::fmt::Debug for Introspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspector")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Settings of an [`Introspector`].
pub(crate) struct Settings {
    pub(crate) endpoint: Endpoint,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) issuer: Option<String>,
    pub(crate) resource: String,
    pub(crate) leeway: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) capacity: usize,
}

impl Introspector {
    pub(crate) fn new(http: HttpClient, s: Settings) -> Self {
        Introspector {
            http: OAuthHttp(http),
            endpoint: s.endpoint,
            client_id: s.client_id,
            client_secret: s.client_secret,
            issuer: s.issuer,
            resource: s.resource,
            leeway: s.leeway,
            cache: TokenCache::new(s.max_ttl, s.capacity),
        }
    }

    async fn client(&self) -> Result<IntrospectionClient, String> {
        let url = match &self.endpoint {
            Endpoint::Url(u) => u.clone(),
            Endpoint::Discovered(d) => d
                .metadata()
                .await?
                .introspection_endpoint
                .clone()
                .ok_or("the issuer's metadata has no introspection_endpoint")?,
        };
        let url =
            IntrospectionUrl::new(url).map_err(|e| format!("invalid introspection URL: {e}"))?;
        let mut client =
            oauth2::Client::new(ClientId::new(self.client_id.clone())).set_introspection_url(url);
        if let Some(secret) = &self.client_secret {
            client = client.set_client_secret(ClientSecret::new(secret.clone()));
        }
        Ok(client)
    }

    pub(crate) async fn verify(&self, token: &str) -> Result<Principal, Rejection> {
        let digest = TokenCache::digest(token);
        if let Some(p) = self.cache.get(&digest) {
            return Ok(p);
        }
        let client = self.client().await.map_err(|e| {
            tracing::warn!(error = %e, "token introspection is unavailable");
            Rejection::invalid_token("The token could not be verified")
        })?;
        let access = AccessToken::new(token.to_owned());
        let response = client
            .introspect(&access)
            .request_async(&self.http)
            .await
            .map_err(|e| {
                let e = crate::error::chain(&e);
                tracing::warn!(error = %e, "token introspection failed");
                Rejection::invalid_token("The token could not be verified")
            })?;
        let (principal, exp) = self.judge(&response)?;
        self.cache.put(digest, &principal, exp);
        Ok(principal)
    }

    /// Active, not expired, not before its time, from our issuer, for this resource.
    fn judge(&self, r: &Response) -> Result<(Principal, Option<i64>), Rejection> {
        if !r.active() {
            return Err(Rejection::invalid_token("The token is not active"));
        }
        let now = unix_now();
        let leeway = i64::try_from(self.leeway.as_secs()).unwrap_or(0);
        let exp = r.exp().map(|t| t.timestamp());
        if exp.is_some_and(|e| e + leeway <= now) {
            return Err(Rejection::invalid_token("The token has expired"));
        }
        if r.nbf().is_some_and(|t| t.timestamp() - leeway > now) {
            return Err(Rejection::invalid_token("The token is not valid yet"));
        }
        if let (Some(expected), Some(iss)) = (&self.issuer, r.iss()) {
            if iss != expected {
                return Err(Rejection::invalid_token(
                    "The token was issued by another issuer",
                ));
            }
        }
        if !r.aud().is_some_and(|a| a.contains(&self.resource)) {
            return Err(Rejection::invalid_token(
                "The token's audience does not include this resource",
            ));
        }
        let claims = match serde_json::to_value(r) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let mut principal = claims::principal(claims);
        if principal.issuer.is_none() {
            principal.issuer = self.issuer.clone();
        }
        Ok((principal, exp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn introspector(capacity: usize) -> Introspector {
        Introspector::new(
            crate::auth::http_client::build(Duration::from_secs(1)).unwrap(),
            Settings {
                endpoint: Endpoint::Url("http://127.0.0.1:9/introspect".into()),
                client_id: "rs".into(),
                client_secret: Some("s".into()),
                issuer: Some("https://as".into()),
                resource: "https://rs/mcp".into(),
                leeway: Duration::from_secs(0),
                max_ttl: Duration::from_secs(60),
                capacity,
            },
        )
    }

    fn response(v: Value) -> Response {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn judges_responses() {
        let i = introspector(4);
        let exp = unix_now() + 100;
        let ok = response(
            json!({"active":true,"aud":"https://rs/mcp","iss":"https://as",
            "sub":"u","scope":"a b","exp":exp,"tenant":"t1"}),
        );
        let (p, e) = i.judge(&ok).unwrap();
        assert_eq!(p.scopes, ["a", "b"]);
        assert_eq!(p.claims["tenant"], "t1", "non-standard claims are kept");
        assert_eq!(e, Some(exp));
        for bad in [
            json!({"active":false}),
            json!({"active":true,"aud":"https://other"}),
            json!({"active":true}),
            json!({"active":true,"aud":"https://rs/mcp","iss":"https://evil"}),
            json!({"active":true,"aud":"https://rs/mcp","exp":unix_now() - 10}),
            json!({"active":true,"aud":"https://rs/mcp","nbf":unix_now() + 100}),
        ] {
            assert!(i.judge(&response(bad.clone())).is_err(), "{bad}");
        }
    }
}

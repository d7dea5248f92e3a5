//! Authorization-server metadata (RFC 8414, or OpenID Connect discovery): where the issuer
//! publishes its keys and its introspection endpoint.

use std::time::{Duration, Instant};

use oauth2::url::Url;
use serde::Deserialize;
use tokio::sync::OnceCell;

use super::http_client::HttpClient;
use super::transport_policy;

/// The parts of the issuer's metadata the resource server uses.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct IssuerMetadata {
    pub(crate) issuer: String,
    #[serde(default)]
    pub(crate) jwks_uri: Option<String>,
    #[serde(default)]
    pub(crate) introspection_endpoint: Option<String>,
}

/// The issuer's metadata, fetched once on first use (a failure is retried, at most once per
/// `retry_after`).
#[derive(Debug)]
pub(crate) struct Discovery {
    http: HttpClient,
    issuer: String,
    retry_after: Duration,
    /// Whether the URLs the metadata names may be plain `http://` on any host.
    allow_http: bool,
    metadata: OnceCell<IssuerMetadata>,
    last_failure: std::sync::Mutex<Option<Instant>>,
}

/// Where to look, in order: RFC 8414 (well-known segment before the issuer's path), OpenID
/// Connect with the same insertion, then OpenID Connect appended to the issuer.
pub(crate) fn candidate_urls(issuer: &Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

impl Discovery {
    pub(crate) fn new(
        http: HttpClient,
        issuer: String,
        retry_after: Duration,
        allow_http: bool,
    ) -> Self {
        Discovery {
            http,
            issuer,
            retry_after,
            allow_http,
            metadata: OnceCell::new(),
            last_failure: std::sync::Mutex::new(None),
        }
    }

    /// The metadata, fetching it if needed.
    pub(crate) async fn metadata(&self) -> Result<&IssuerMetadata, String> {
        if let Some(m) = self.metadata.get() {
            return Ok(m);
        }
        {
            let last = self.last_failure.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|t| t.elapsed() < self.retry_after) {
                return Err("the issuer's metadata could not be fetched recently".into());
            }
        }
        let result = self.metadata.get_or_try_init(|| self.fetch()).await;
        if let Err(e) = &result {
            tracing::warn!(issuer = %self.issuer, error = %e, "authorization server discovery failed");
            *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        }
        result
    }

    async fn fetch(&self) -> Result<IssuerMetadata, String> {
        let issuer = Url::parse(&self.issuer).map_err(|e| format!("invalid issuer URL: {e}"))?;
        let mut last_error = String::from("no discovery document found");
        for url in candidate_urls(&issuer) {
            match self.fetch_one(&url).await {
                Ok(m) if m.issuer == self.issuer => return self.checked(m),
                Ok(m) => {
                    // RFC 8414 §3.3: a document naming another issuer must not be used.
                    last_error = format!("{url} names issuer {:?}", m.issuer);
                }
                Err(e) => last_error = format!("{url}: {e}"),
            }
        }
        Err(last_error)
    }

    /// Refuses metadata that sends the resource server to a URL it must not use (plain
    /// `http://` off loopback): the keys or answers it would fetch there could be forged.
    fn checked(&self, m: IssuerMetadata) -> Result<IssuerMetadata, String> {
        if let Some(u) = &m.jwks_uri {
            transport_policy::check_str("the issuer's jwks_uri", u, self.allow_http)?;
        }
        if let Some(u) = &m.introspection_endpoint {
            transport_policy::check_str("the issuer's introspection_endpoint", u, self.allow_http)?;
        }
        Ok(m)
    }

    async fn fetch_one(&self, url: &str) -> Result<IssuerMetadata, String> {
        let response = self
            .http
            .get_json(url)
            .await
            .map_err(|e| crate::error::chain(&*e))?;
        if !response.status.is_success() {
            return Err(format!("HTTP {}", response.status));
        }
        serde_json::from_slice(&response.body).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(jwks: &str, introspection: &str) -> IssuerMetadata {
        IssuerMetadata {
            issuer: "https://as.example.com".into(),
            jwks_uri: Some(jwks.into()),
            introspection_endpoint: Some(introspection.into()),
        }
    }

    #[test]
    fn discovered_urls_must_be_https_off_loopback() {
        let http = super::super::http_client::build(Duration::from_secs(1)).unwrap();
        let strict = Discovery::new(
            http.clone(),
            "https://as.example.com".into(),
            Duration::ZERO,
            false,
        );
        let ok = metadata("https://as.example.com/jwks", "http://127.0.0.1:9/i");
        assert!(strict.checked(ok).is_ok());
        let e = strict
            .checked(metadata("http://as.example.com/jwks", "https://as/i"))
            .unwrap_err();
        assert!(e.contains("the issuer's jwks_uri"), "{e}");
        let e = strict
            .checked(metadata("https://as/jwks", "http://as.example.com/i"))
            .unwrap_err();
        assert!(e.contains("introspection_endpoint"), "{e}");
        let lax = Discovery::new(http, "https://as.example.com".into(), Duration::ZERO, true);
        assert!(
            lax.checked(metadata("http://as.example.com/jwks", "http://as/i"))
                .is_ok()
        );
    }

    #[test]
    fn discovery_urls() {
        let u = Url::parse("https://as.example.com").unwrap();
        assert_eq!(
            candidate_urls(&u),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration"
            ]
        );
        let u = Url::parse("https://as.example.com/tenant/1/").unwrap();
        assert_eq!(
            candidate_urls(&u),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example.com/.well-known/openid-configuration/tenant/1",
                "https://as.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
    }
}

//! The HTTP client the resource server talks to its authorization server with: rustls with
//! the `ring` provider, no redirects, bounded timeouts, and an adapter for the `oauth2`
//! crate's request types.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use oauth2::{AsyncHttpClient, HttpRequest, HttpResponse};

use crate::Error;

/// Builds the client. Installs `ring` as the process's rustls provider when none is set.
pub(crate) fn build(timeout: Duration) -> Result<reqwest::Client, Error> {
    // Fails only when a provider is already installed, which is what we want then.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .connect_timeout(timeout)
        .build()
        .map_err(|e| Error::invalid_definition(format!("cannot build the HTTP client: {e}")))
}

/// The `oauth2` crate's view of our client.
#[derive(Clone, Debug)]
pub(crate) struct OAuthHttp(pub(crate) reqwest::Client);

impl<'c> AsyncHttpClient<'c> for OAuthHttp {
    type Error = reqwest::Error;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let response = self
                .0
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await?;
            let mut out = http::Response::new(Vec::new());
            *out.status_mut() = response.status();
            *out.headers_mut() = response.headers().clone();
            *out.body_mut() = response.bytes().await?.to_vec();
            Ok(out)
        })
    }
}

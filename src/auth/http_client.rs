//! The HTTP client the resource server talks to its authorization server with: hyper over
//! rustls with its own `ring` provider and the platform's certificate verifier, no
//! redirects, bounded timeouts, and an adapter for the `oauth2` crate's request types.
//!
//! It never touches the process's default rustls provider, and the crate does not depend on
//! reqwest: an application's own HTTP clients (reqwest with any features, built before or
//! after the resource server) are configured by the application alone.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use oauth2::{AsyncHttpClient, HttpRequest, HttpResponse};

use crate::Error;

/// The largest response body read from the authorization server (metadata, JWKS,
/// introspection answers are small).
const MAX_BODY: usize = 1024 * 1024;

/// A response: status, headers, the whole body.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// The client (cheap to clone).
#[derive(Clone, Debug)]
pub(crate) struct HttpClient {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
}

/// Builds the client: `timeout` bounds connecting and each whole request.
pub(crate) fn build(timeout: Duration) -> Result<HttpClient, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(timeout));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_platform_verifier(provider)
        .map_err(|e| Error::invalid_definition(format!("cannot set up TLS: {e}")))?
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Ok(HttpClient {
        client: Client::builder(TokioExecutor::new()).build(https),
        timeout,
    })
}

impl HttpClient {
    /// `GET url` with `Accept: application/json`.
    pub(crate) async fn get_json(&self, url: &str) -> Result<Response, BoxedError> {
        let request = Request::builder()
            .method(Method::GET)
            .uri(url)
            .header(header::ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))?;
        self.send(request).await
    }

    /// Sends `request` and reads the whole response, within the timeout.
    pub(crate) async fn send(&self, request: Request<Full<Bytes>>) -> Result<Response, BoxedError> {
        let exchange = async {
            let response = self.client.request(request).await?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_BODY).collect().await?.to_bytes();
            Ok::<_, BoxedError>(Response {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err(format!("no answer within {:?}", self.timeout).into()),
        }
    }
}

/// A transport error with its sources.
pub(crate) type BoxedError = Box<dyn std::error::Error + Send + Sync>;

/// The `oauth2` crate's view of our client.
#[derive(Clone, Debug)]
pub(crate) struct OAuthHttp(pub(crate) HttpClient);

impl<'c> AsyncHttpClient<'c> for OAuthHttp {
    type Error = BoxedErrorWrapper;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let request = Request::from_parts(parts, Full::new(Bytes::from(body)));
            let response = self.0.send(request).await.map_err(BoxedErrorWrapper)?;
            let mut out = http::Response::new(response.body.to_vec());
            *out.status_mut() = response.status;
            *out.headers_mut() = response.headers;
            Ok(out)
        })
    }
}

/// A [`BoxedError`] as a concrete error type (what `oauth2` asks of a client's error).
#[derive(Debug)]
pub(crate) struct BoxedErrorWrapper(pub(crate) BoxedError);

impl std::fmt::Display for BoxedErrorWrapper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for BoxedErrorWrapper {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

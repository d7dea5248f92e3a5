//! [`AuthService`]: authenticate, authorize, then call the inner service.

use std::task::{Context, Poll};

use http::{HeaderName, HeaderValue, Request, Response, header};
use tower::Service;

use super::challenge::DPOP_NONCE;
use super::drain;
use super::future::ResponseFuture;
use super::resource_server::ResourceServer;

/// The `DPoP` request header (RFC 9449 §4.1).
const DPOP: HeaderName = HeaderName::from_static("dpop");

/// A service that admits only requests with a valid bearer token and the scopes their
/// operation needs; others get a `401`/`403`/`400` challenge and never reach the inner
/// service. Admitted requests carry the [`Principal`](crate::handler::Principal) (and the
/// [`ScopeHierarchy`](crate::handler::ScopeHierarchy)) in their extensions, and no longer
/// carry the `Authorization` header, so nothing downstream can forward the token.
#[derive(Clone, Debug)]
pub struct AuthService<S> {
    pub(crate) inner: S,
    pub(crate) server: ResourceServer,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for AuthService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqBody: http_body::Body + Send + 'static,
    ResBody: From<String> + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<Response<ResBody>, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        // The clone may not be ready; keep the one that is.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let server = self.server.clone();
        ResponseFuture {
            inner: Box::pin(async move {
                let (mut parts, body) = request.into_parts();
                let required = server.inner.rules.required(&parts.headers);
                match server
                    .authorize(&parts.headers, &parts.method, &parts.uri, &required)
                    .await
                {
                    Ok(principal) => {
                        parts.headers.remove(header::AUTHORIZATION);
                        parts.headers.remove(DPOP);
                        parts.extensions.insert(principal);
                        parts.extensions.insert(server.inner.hierarchy.clone());
                        let nonce = server.inner.dpop.as_ref().and_then(|d| d.current_nonce());
                        let mut response = inner.call(Request::from_parts(parts, body)).await?;
                        // The nonce to use next (RFC 9449 §8.2), on every admitted response.
                        if let Some(v) = nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
                            response.headers_mut().insert(DPOP_NONCE, v);
                        }
                        Ok(response)
                    }
                    Err(rejection) => {
                        tracing::debug!(
                            kind = ?rejection.kind(),
                            reason = rejection.description(),
                            "request refused by the resource server"
                        );
                        crate::observability::metrics::record_auth_failure(rejection.reason());
                        let read = drain::drain(body).await;
                        let mut response =
                            rejection.into_response(&server.challenge_context(&required));
                        if !read {
                            drain::close(&mut response);
                        }
                        Ok(response)
                    }
                }
            }),
        }
    }
}

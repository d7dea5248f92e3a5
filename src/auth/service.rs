//! [`AuthService`]: authenticate, authorize, then call the inner service.

use std::task::{Context, Poll};

use http::{Request, Response, header};
use tower::Service;

use super::future::ResponseFuture;
use super::resource_server::ResourceServer;

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
    ReqBody: Send + 'static,
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
                    .authorize(&parts.headers, &parts.uri, &required)
                    .await
                {
                    Ok(principal) => {
                        parts.headers.remove(header::AUTHORIZATION);
                        parts.extensions.insert(principal);
                        parts.extensions.insert(server.inner.hierarchy.clone());
                        inner.call(Request::from_parts(parts, body)).await
                    }
                    Err(rejection) => {
                        tracing::debug!(
                            kind = ?rejection.kind(),
                            reason = rejection.description(),
                            "request refused by the resource server"
                        );
                        crate::observability::metrics::record_auth_failure(rejection.reason());
                        Ok(rejection.into_response(&server.inner.metadata_url, &required))
                    }
                }
            }),
        }
    }
}

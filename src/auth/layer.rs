//! [`AuthLayer`]: applies a [`ResourceServer`] to a service, and the resource server's
//! ways to apply it ([`ResourceServer::layer`], [`ResourceServer::protect`]).

use axum::Router;
use tower::Layer;

use super::resource_server::ResourceServer;
use super::service::AuthService;

/// Wraps services in [`AuthService`]: every request needs a valid bearer token with the
/// scopes its operation needs. Built by [`ResourceServer::layer`].
#[derive(Clone, Debug)]
pub struct AuthLayer {
    pub(crate) server: ResourceServer,
}

impl<S> Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AuthService {
            inner,
            server: self.server.clone(),
        }
    }
}

impl ResourceServer {
    /// A tower layer that protects a service (see [`AuthLayer`]).
    pub fn layer(&self) -> AuthLayer {
        AuthLayer {
            server: self.clone(),
        }
    }

    /// Protects every route of `router` (on matched routes only, so unknown paths still get
    /// `404`) and adds the metadata routes, which stay public.
    pub fn protect<S>(&self, router: Router<S>) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        router
            .route_layer(self.layer())
            .merge(self.metadata_router())
    }
}

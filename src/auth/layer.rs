//! [`AuthLayer`]: applies a [`ResourceServer`] to a service.

use tower::Layer;

use super::{AuthService, ResourceServer};

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

//! What the runner puts around the MCP endpoint ([`Runner::wrap_endpoint`] and
//! [`Runner::layer_endpoint`](super::Runner::layer_endpoint)), in the order given: each
//! wraps the endpoint's router, and a layer also wraps the endpoint as the runner answers
//! it without the router ([`Direct`]). Once anything wraps the router only, every request
//! goes through the router.
//!
//! [`Runner::wrap_endpoint`]: super::Runner::wrap_endpoint

use std::convert::Infallible;
use std::future::Future;

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use futures_util::future::Either;
use http::Request;
use tower::ServiceExt as _;
use tower::util::BoxCloneSyncService;

use crate::transport::http::direct::Direct;

/// The MCP endpoint as one service: what [`Runner::layer_endpoint`] layers wrap for requests
/// to the endpoint's path (the router's route for the rest).
///
/// [`Runner::layer_endpoint`]: super::Runner::layer_endpoint
pub(crate) type EndpointService = BoxCloneSyncService<Request<Body>, Response, Infallible>;

/// One change to a `T`, or several composed.
type Change<T> = Box<dyn FnOnce(T) -> T + Send>;

/// `first` (if any), then `next`.
fn then<T: 'static>(
    first: Option<Change<T>>,
    next: impl FnOnce(T) -> T + Send + 'static,
) -> Option<Change<T>> {
    Some(match first {
        Some(first) => Box::new(move |x| next(first(x))),
        None => Box::new(next),
    })
}

/// Everything around the endpoint, composed.
#[derive(Default)]
pub(crate) struct Wrapping {
    router: Option<Change<Router>>,
    direct: Option<Change<EndpointService>>,
    /// Set by a router-only wrap: nothing is answered without the router.
    router_only: bool,
}

impl Wrapping {
    /// Adds `wrap` around the router (and turns the direct answers off).
    pub(crate) fn router(&mut self, wrap: impl FnOnce(Router) -> Router + Send + 'static) {
        self.router = then(self.router.take(), wrap);
        self.router_only = true;
    }

    /// Adds a layer: `route` puts it around the router's route, `direct` around the direct
    /// answers (see [`Runner::layer_endpoint`](super::Runner::layer_endpoint)).
    pub(crate) fn layer(
        &mut self,
        route: impl FnOnce(Router) -> Router + Send + 'static,
        direct: impl FnOnce(EndpointService) -> EndpointService + Send + 'static,
    ) {
        self.router = then(self.router.take(), route);
        self.direct = then(self.direct.take(), direct);
    }

    /// The endpoint's router and what answers its path without it, wrapped.
    pub(crate) fn apply(self, router: Router, direct: Option<Direct>) -> (Router, Option<Answer>) {
        let router = match self.router {
            Some(wrap) => wrap(router),
            None => router,
        };
        if self.router_only {
            return (router, None);
        }
        let layers = self.direct;
        let answer = direct.map(|direct| Answer {
            layered: layers.map(|wrap| wrap(BoxCloneSyncService::new(direct.clone()))),
            direct,
        });
        (router, answer)
    }
}

/// What answers requests to the endpoint's path without the router: the endpoint, in its
/// layers when it has any.
#[derive(Clone)]
pub(crate) struct Answer {
    /// Which requests are answered, and the answer when there are no layers.
    direct: Direct,
    layered: Option<EndpointService>,
}

impl Answer {
    /// Whether this answers `request` ([`Direct::takes`]).
    pub(crate) fn takes<B>(&self, request: &Request<B>) -> bool {
        self.direct.takes(request)
    }

    /// Answers `request` (one [`takes`](Self::takes) accepted).
    pub(crate) fn call<B>(
        &self,
        request: Request<B>,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + use<B>
    where
        B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        let request = request.map(Body::new);
        match &self.layered {
            None => Either::Left(self.direct.answer(request)),
            Some(layered) => Either::Right(layered.clone().oneshot(request)),
        }
    }
}

//! What the runner puts around the MCP endpoint ([`Runner::wrap_endpoint`] and
//! [`Runner::layer_endpoint`](super::Runner::layer_endpoint)), in the order given: each
//! wraps the endpoint's router, and a layer also wraps the endpoint as the runner answers
//! it without the router ([`Direct`]). Once anything wraps the router only, every request
//! goes through the router.
//!
//! [`Runner::wrap_endpoint`]: super::Runner::wrap_endpoint

use std::convert::Infallible;

use axum::Router;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use axum::routing::Route;
use http::Request;
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service};

use crate::transport::http::direct::Direct;

/// The MCP endpoint as one service: what [`Runner::layer_endpoint`] layers wrap for requests
/// to the endpoint's path (the router's route for the rest).
///
/// [`Runner::layer_endpoint`]: super::Runner::layer_endpoint
pub type EndpointService = BoxCloneSyncService<Request<Body>, Response, Infallible>;

type RouterWrap = Box<dyn FnOnce(Router) -> Router + Send>;
type ServiceWrap = Box<dyn FnOnce(EndpointService) -> EndpointService + Send>;

/// Everything around the endpoint, composed.
#[derive(Default)]
pub(crate) struct Wrapping {
    router: Option<RouterWrap>,
    direct: Option<ServiceWrap>,
    /// Set by a router-only wrap: nothing is answered without the router.
    router_only: bool,
}

impl Wrapping {
    /// Adds `wrap` around the router (and turns the direct answers off).
    pub(crate) fn router(&mut self, wrap: impl FnOnce(Router) -> Router + Send + 'static) {
        self.router = Some(match self.router.take() {
            Some(first) => Box::new(move |r| wrap(first(r))),
            None => Box::new(wrap),
        });
        self.router_only = true;
    }

    /// Adds `layer` around the router's route and around the direct answers.
    pub(crate) fn layer<L>(&mut self, layer: L)
    where
        L: Layer<Route> + Layer<EndpointService> + Clone + Send + Sync + 'static,
        <L as Layer<Route>>::Service:
            Service<Request<Body>, Error = Infallible> + Clone + Send + Sync + 'static,
        <<L as Layer<Route>>::Service as Service<Request<Body>>>::Response: IntoResponse + 'static,
        <<L as Layer<Route>>::Service as Service<Request<Body>>>::Future: Send + 'static,
        <L as Layer<EndpointService>>::Service: Service<Request<Body>, Response = Response, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        <<L as Layer<EndpointService>>::Service as Service<Request<Body>>>::Future: Send + 'static,
    {
        let on_route = layer.clone();
        let route = move |r: Router| r.route_layer(on_route);
        self.router = Some(match self.router.take() {
            Some(first) => Box::new(move |r| route(first(r))),
            None => Box::new(route),
        });
        let direct = move |s: EndpointService| BoxCloneSyncService::new(layer.layer(s));
        self.direct = Some(match self.direct.take() {
            Some(first) => Box::new(move |s| direct(first(s))),
            None => Box::new(direct),
        });
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
        let answer = direct.map(|d| match self.direct {
            None => Answer::Plain(d),
            Some(wrap) => {
                let service = wrap(BoxCloneSyncService::new(d.clone()));
                Answer::Layered(d, service)
            }
        });
        (router, answer)
    }
}

/// What answers requests to the endpoint's path without the router.
#[derive(Clone)]
pub(crate) enum Answer {
    /// The endpoint itself.
    Plain(Direct),
    /// The endpoint in layers (the [`Direct`] says which requests it takes).
    Layered(Direct, EndpointService),
}

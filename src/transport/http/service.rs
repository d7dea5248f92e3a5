//! The endpoint as one tower service: what [`StreamableHttp::into_service`] returns, what
//! its router's route and the runner's direct answers call.
//!
//! [`StreamableHttp::into_service`]: super::StreamableHttp::into_service

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use http::Request;
use tower::Service;
use tower::util::BoxCloneSyncService;

use super::endpoint::{self, Endpoint};

/// The endpoint, alone or inside its CORS layer. It answers every request it is given,
/// whatever the path: mount it on the path you want.
#[derive(Clone)]
pub(crate) enum McpService {
    /// The endpoint's handler.
    Plain(Arc<Endpoint>),
    /// The handler in layers (the CORS policy).
    Layered(BoxCloneSyncService<Request<Body>, Response, Infallible>),
}

impl McpService {
    /// Answers `request`.
    ///
    /// The future is boxed, as a router boxes its handlers' futures: held inline, the
    /// endpoint's (over a kilobyte) would sit in every connection's task for as long as the
    /// connection lives (an open listen stream's included), where boxed it is freed once the
    /// response has left.
    pub(crate) fn answer(
        &self,
        request: Request<Body>,
    ) -> BoxFuture<'static, Result<Response, Infallible>> {
        match self {
            McpService::Plain(endpoint) => {
                // Not an `async` block around it: that would hold the endpoint's future and
                // a second copy of it, and the whole is copied into the box.
                Box::pin(endpoint::handle(State(endpoint.clone()), request).map(Ok))
            }
            McpService::Layered(layered) => layered.clone().call(request),
        }
    }
}

impl Service<Request<Body>> for McpService {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both kinds are always ready (the layered one is the CORS policy around the
        // handler, which is).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        self.answer(request)
    }
}

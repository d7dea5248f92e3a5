//! The endpoint answered without a router in front: what the [`Runner`](crate::Runner) does
//! for a request to the endpoint's own path when nothing wraps the endpoint. An axum
//! `Router` would match the path, allocate its path parameters (and the request's extension
//! map for them), box the handler's future and wrap it in four more; for the one route whose
//! path is fixed, comparing the path does the same job.
//!
//! Requests it does not take (another path, `HEAD`, `CONNECT`) go to the router, which
//! answers them as before; so do all requests when the path has parameters (`{…}`).

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use futures_util::future::BoxFuture;
use http::{Method, Request};

use super::service::McpService;

/// The endpoint and the one path it answers directly.
#[derive(Clone)]
pub(crate) struct Direct {
    path: Arc<str>,
    endpoint: McpService,
}

impl Direct {
    /// `None` when `path` is not a fixed path (it has parameters: the router matches it).
    pub(super) fn new(path: &str, endpoint: McpService) -> Option<Self> {
        (!path.contains(['{', '}', '*'])).then(|| Direct {
            path: path.into(),
            endpoint,
        })
    }

    /// Whether this answers `request`: its path is the endpoint's, and its method one the
    /// router would hand to the endpoint unchanged (it strips `HEAD` responses' bodies and
    /// checks `CONNECT` responses).
    pub(crate) fn takes<B>(&self, request: &Request<B>) -> bool {
        request.uri().path() == &*self.path
            && request.method() != Method::HEAD
            && request.method() != Method::CONNECT
    }

    /// Answers `request` (one [`takes`](Self::takes) accepted) as the router's route would
    /// (see [`McpService::answer`]).
    pub(crate) fn answer(
        &self,
        request: Request<Body>,
    ) -> BoxFuture<'static, Result<Response, Infallible>> {
        self.endpoint.answer(request)
    }
}

/// The same answers as a tower service, for layers to wrap.
impl tower::Service<Request<Body>> for Direct {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        self.answer(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Server;
    use crate::transport::http::StreamableHttp;

    fn direct(path: &str) -> Option<Direct> {
        StreamableHttp::new(Server::builder().build().unwrap())
            .path(path)
            .into_router_and_direct::<()>()
            .1
    }

    fn request(method: Method, uri: &str) -> Request<()> {
        Request::builder().method(method).uri(uri).body(()).unwrap()
    }

    #[test]
    fn takes_its_own_fixed_path_but_not_head_or_connect() {
        let d = direct("/mcp").expect("a fixed path");
        for m in [
            Method::POST,
            Method::GET,
            Method::DELETE,
            Method::PUT,
            Method::OPTIONS,
        ] {
            assert!(d.takes(&request(m.clone(), "/mcp")), "{m}");
            assert!(d.takes(&request(m, "http://example.com/mcp?x=1")));
        }
        assert!(!d.takes(&request(Method::HEAD, "/mcp")));
        assert!(!d.takes(&request(Method::CONNECT, "/mcp")));
        for other in ["/", "/mcp/", "/mcpx", "/MCP", "/%6Dcp", "/api/mcp"] {
            assert!(!d.takes(&request(Method::POST, other)), "{other}");
        }
    }

    #[test]
    fn a_path_with_parameters_is_left_to_the_router() {
        assert!(direct("/{tenant}/mcp").is_none());
        assert!(direct("/mcp/{*rest}").is_none());
        assert!(direct("/api/mcp").is_some());
    }
}

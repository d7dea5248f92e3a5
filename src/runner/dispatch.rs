//! Which service answers each request of a connection: the MCP endpoint itself for a
//! request to its own path ([`Answer`]), the app's router (the endpoint's route, your own
//! routes) for every other, and the runner's probes for a request to one of their paths
//! that none of your routes takes.
//!
//! Your routes come first on the probes' paths: an app with a `/healthz` of its own keeps
//! it. axum's `merge` would panic on the overlap instead (when the server starts), and axum
//! cannot tell which paths a router has; so your routes are marked ([`mark_own`]: a layer
//! on matched routes only, which leaves your fallback unmarked) and a request to a probe's
//! path goes to the app first, then to the probes when no route of yours answered it.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use futures_util::future::Either;
use http::Request;
use hyper::body::Incoming;
use tower::Service as _;

use super::accept::App;
use super::wrap::Answer;

/// Put on the responses of your own routes (not of your fallback): see the module docs.
#[derive(Debug, Clone, Copy)]
struct OwnRoute;

/// `routes` with every response of a matched route marked as yours.
pub(crate) fn mark_own(routes: Router) -> Router {
    if !routes.has_routes() {
        // (axum refuses a route layer on a router without routes.)
        return routes;
    }
    routes.route_layer(axum::middleware::map_response(
        |mut response: Response| async move {
            response.extensions_mut().insert(OwnRoute);
            response
        },
    ))
}

/// The runner's own routes (probes, metrics) and their paths.
type Probes = (Router, Vec<String>);

/// The app a listener serves, and the endpoint it answers without the app's router.
pub(crate) struct Dispatch {
    app: Router,
    direct: Option<Answer>,
    probes: Option<Probes>,
}

impl Dispatch {
    /// `app` for every request, or `direct` first for those it takes; `probes` for requests
    /// to their paths that `app`'s own routes ([`mark_own`]) do not answer.
    pub(crate) fn new(app: Router, direct: Option<Answer>, probes: Option<Probes>) -> Self {
        Dispatch {
            app,
            direct,
            probes,
        }
    }

    /// The service each connection calls. hyper clones it for every request, so all it
    /// holds is one `Arc`.
    pub(crate) fn into_service(self) -> impl App<Body> {
        let shared = Arc::new(self);
        tower::service_fn(move |request: Request<Incoming>| {
            if let Some(answer) = shared.direct.as_ref().filter(|a| a.takes(&request)) {
                return Either::Left(answer.call(request));
            }
            match &shared.probes {
                Some((_, paths)) if paths.iter().any(|p| p == request.uri().path()) => {
                    Either::Right(Either::Left(Box::pin(probe(shared.clone(), request))))
                }
                // Boxed: the router's future holds the request, and inline it would make
                // every request's future that much larger, the endpoint's included.
                _ => Either::Right(Either::Right(Box::pin(shared.app.clone().call(request)))),
            }
        })
    }
}

/// A request to a probe's path: the app's answer when one of your routes gave it, else the
/// probe's (its body is dropped: probes read none).
async fn probe(
    shared: Arc<Dispatch>,
    request: Request<Incoming>,
) -> Result<Response, std::convert::Infallible> {
    let (parts, body) = request.into_parts();
    let mut again = Request::new(Body::empty());
    *again.method_mut() = parts.method.clone();
    *again.uri_mut() = parts.uri.clone();
    *again.version_mut() = parts.version;
    *again.headers_mut() = parts.headers.clone();
    *again.extensions_mut() = parts.extensions.clone();
    let mine = shared
        .app
        .clone()
        .call(Request::from_parts(parts, Body::new(body)))
        .await?;
    if mine.extensions().get::<OwnRoute>().is_some() {
        return Ok(mine);
    }
    match &shared.probes {
        Some((probes, _)) => probes.clone().call(again).await,
        None => Ok(mine),
    }
}

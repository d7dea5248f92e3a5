//! Which service answers each request of a connection: the MCP endpoint itself for a
//! request to its own path ([`Answer`]), the app's router (the endpoint's route, your own
//! routes, the probes) for every other.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use futures_util::future::Either;
use http::Request;
use hyper::body::Incoming;
use tower::Service as _;

use super::accept::App;
use super::wrap::Answer;

/// The app a listener serves, and the endpoint it answers without the app's router.
pub(crate) struct Dispatch {
    app: Router,
    direct: Option<Answer>,
}

impl Dispatch {
    /// `app` for every request, or `direct` first for those it takes.
    pub(crate) fn new(app: Router, direct: Option<Answer>) -> Self {
        Dispatch { app, direct }
    }

    /// The service each connection calls. hyper clones it for every request, so all it
    /// holds is one `Arc`.
    pub(crate) fn into_service(self) -> impl App<Body> {
        let shared = Arc::new(self);
        tower::service_fn(move |request: Request<Incoming>| match &shared.direct {
            Some(answer) if answer.takes(&request) => Either::Left(answer.call(request)),
            _ => Either::Right(shared.app.clone().call(request)),
        })
    }
}

//! Which service answers each request of a connection: the MCP endpoint itself for a
//! request to its own path ([`Answer`]), the app's router (the endpoint's route, your own
//! routes, the probes) for every other.

use axum::Router;
use axum::body::Body;
use futures_util::future::Either;
use http::Request;
use hyper::body::Incoming;
use tower::ServiceExt as _;

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

    /// The service one connection calls (cloned per connection).
    pub(crate) fn into_service(self) -> impl App<Body> {
        let Dispatch { mut app, direct } = self;
        tower::service_fn(move |request: Request<Incoming>| match &direct {
            Some(Answer::Plain(d)) if d.takes(&request) => {
                Either::Left(Either::Left(d.answer(request)))
            }
            Some(Answer::Layered(d, layered)) if d.takes(&request) => Either::Left(Either::Right(
                layered.clone().oneshot(request.map(Body::new)),
            )),
            _ => Either::Right(tower::Service::call(&mut app, request)),
        })
    }
}

//! What every response of a [`Runner`](super::Runner) gets: its response header, if any, and
//! `Connection: close` once the drain has closed the listener, so each open keep-alive
//! connection serves at most one more request (hyper drops the header on HTTP/2).
//!
//! Applied by each connection's service ([`super::watch::Counted`]) as the response leaves
//! it: one shared value for all requests, where a router layer or a `MapResponse` around the
//! app would clone its closure (the header and a cancellation token, whose clone and drop each
//! take a lock) on every request.

use http::header::CONNECTION;
use http::{HeaderName, HeaderValue, Response};

use super::signal::Signal;

/// The response header and the listener's closed signal.
#[derive(Debug, Clone)]
pub(crate) struct Stamp {
    header: Option<(HeaderName, HeaderValue)>,
    closed: Signal,
}

impl Stamp {
    pub(crate) fn new(header: Option<(HeaderName, HeaderValue)>, closed: Signal) -> Self {
        Stamp { header, closed }
    }

    /// Stamps `response`.
    pub(crate) fn apply<B>(&self, response: &mut Response<B>) {
        if let Some((name, value)) = &self.header {
            response.headers_mut().insert(name.clone(), value.clone());
        }
        if self.closed.is_cancelled() {
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_always_and_connection_close_once_closed() {
        let closed = Signal::default();
        let name = HeaderName::from_static("x-mcp-replica");
        let stamp = Stamp::new(
            Some((name.clone(), HeaderValue::from_static("r1"))),
            closed.clone(),
        );
        let mut response = Response::new(());
        stamp.apply(&mut response);
        assert_eq!(response.headers()[&name], "r1");
        assert!(response.headers().get(CONNECTION).is_none());
        closed.cancel();
        let mut response = Response::new(());
        stamp.apply(&mut response);
        assert_eq!(response.headers()[CONNECTION], "close");
        let mut response = Response::new(());
        Stamp::new(None, Signal::default()).apply(&mut response);
        assert!(response.headers().is_empty());
    }
}

//! The in-flight bound: at most `max` requests per replica are being answered at once,
//! counted from their arrival until their response body ends (a streamed `tools/call`
//! counts while it streams). One more is answered `503` with `Retry-After: 1` before any of
//! it is read. `subscriptions/listen` requests (by their `Mcp-Method` header, which the
//! endpoint checks against the body) and GET requests are not counted: listen streams have
//! their own limit and live for hours.
//!
//! Why not tower's `ConcurrencyLimit` + `LoadShed`: they decide in `poll_ready`, before the
//! request is seen (so listen streams could not be left out), release the permit when the
//! response future resolves (a streamed reply would stop counting while it streams), and
//! shed with an error instead of an MCP answer. The counting is tokio's `Semaphore` (a
//! permit per request, held by the response body); what is written here is the exemption
//! and the answer: `503`, `Retry-After` and a JSON-RPC error body.

use std::sync::Arc;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{Method, StatusCode};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{Guarded, refusal};
use crate::mirrored::Found;
use crate::observability::metrics::{self, Refusal};

/// The bound: one semaphore shared by every clone.
#[derive(Debug, Clone)]
pub(crate) struct InFlightLimit {
    permits: Arc<Semaphore>,
    max: usize,
}

impl InFlightLimit {
    pub(crate) fn new(max: usize) -> Self {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        InFlightLimit {
            permits: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    fn acquire(&self) -> Option<Slot> {
        self.permits
            .clone()
            .try_acquire_owned()
            .ok()
            .map(|permit| Slot { _permit: permit })
    }
}

/// A request refused because `max` were being answered: 503 with `Retry-After: 1`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Overloaded {
    max: usize,
}

impl IntoResponse for Overloaded {
    fn into_response(self) -> Response {
        refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            1,
            None,
            format!(
                "Server busy: this replica is answering its maximum of {} requests; retry in 1 s",
                self.max
            ),
            "overloaded",
        )
    }
}

/// One request counted, until dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

/// Whether a request with this method and `Mcp-Method` header (its first value, as sent) is
/// left out.
fn exempt(method: &Method, mcp_method: Found<'_>) -> bool {
    *method == Method::GET
        || mcp_method
            .first()
            .is_some_and(|m| m.as_bytes() == b"subscriptions/listen")
}

impl InFlightLimit {
    /// Counts a request with this method and `Mcp-Method` header in (`Ok(Some(slot))`, held
    /// until its response body ends: see [`InFlightLimit::hold`]), leaves it out
    /// (`Ok(None)`, exempt), or refuses it.
    pub(crate) fn admit(
        &self,
        method: &Method,
        mcp_method: Found<'_>,
    ) -> Result<Option<Slot>, Overloaded> {
        if exempt(method, mcp_method) {
            return Ok(None);
        }
        match self.acquire() {
            Some(slot) => Ok(Some(slot)),
            None => {
                metrics::record_refusal(Refusal::Overloaded);
                Err(Overloaded { max: self.max })
            }
        }
    }

    /// `response` with `slot` held by its body.
    pub(crate) fn hold(response: Response, slot: Option<Slot>) -> Response {
        match slot {
            Some(slot) => response.map(|body| Body::new(Guarded::new(body, Some(slot)))),
            None => response,
        }
    }
}

/// A complete body, holding `slot` (if any) until it ends: what [`InFlightLimit::hold`] makes
/// of it, boxed once instead of twice.
pub(crate) fn body_holding<B>(body: B, slot: Option<Slot>) -> Body
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    match slot {
        Some(slot) => Body::new(Guarded::new(body, Some(slot))),
        None => Body::new(body),
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::Full;

    use super::*;
    use crate::mirrored::METHOD as MCP_METHOD;

    #[test]
    fn slots_are_bounded_and_returned() {
        let limit = InFlightLimit::new(2);
        let a = limit.acquire().unwrap();
        let _b = limit.acquire().unwrap();
        assert!(limit.acquire().is_none());
        drop(a);
        assert!(limit.acquire().is_some());
    }

    #[tokio::test]
    async fn a_complete_body_holds_its_slot_until_it_ends() {
        use http_body::Body as _;
        use http_body_util::BodyExt as _;
        let limit = InFlightLimit::new(1);
        let held = |slot| {
            (
                InFlightLimit::hold(Response::new(Body::from("answer")), Some(slot)),
                "hold",
            )
        };
        let built = |slot| {
            (
                Response::new(body_holding(
                    Full::new(Bytes::from_static(b"answer")),
                    Some(slot),
                )),
                "body_holding",
            )
        };
        for make in [held, built] {
            let (response, how) = make(limit.acquire().unwrap());
            assert_eq!(response.body().size_hint().exact(), Some(6), "{how}");
            assert!(limit.acquire().is_none(), "{how}: held");
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, "answer", "{how}");
            assert!(limit.acquire().is_some(), "{how}: released at the end");
        }
        let body = body_holding(Full::new(Bytes::from_static(b"x")), None);
        assert_eq!(body.size_hint().exact(), Some(1));
    }

    #[test]
    fn listen_and_get_requests_are_not_counted() {
        let headers = |method: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(MCP_METHOD, method.parse().unwrap());
            h
        };
        let exempt =
            |method: &Method, h: &http::HeaderMap| exempt(method, Found::lookup(h, MCP_METHOD));
        let listen = headers("subscriptions/listen");
        assert!(exempt(&Method::POST, &listen));
        assert!(exempt(&Method::GET, &http::HeaderMap::new()));
        assert!(!exempt(&Method::POST, &headers("tools/call")));
        assert!(
            !exempt(&Method::POST, &headers(" subscriptions/listen")),
            "as sent, not trimmed"
        );
        assert!(!exempt(&Method::POST, &http::HeaderMap::new()));
    }
}

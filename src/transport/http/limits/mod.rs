//! Load shedding and rate limits on the MCP endpoint, checked by its handler first (plain
//! gates rather than router layers, which would box every request's future):
//!
//! - [`in_flight`]: at most N requests per replica are being answered at once; one more gets
//!   `503` with `Retry-After` and a JSON-RPC error. Listen streams are not counted (they have
//!   their own bound, [`ListenLimits`](crate::settings::ListenLimits)).
//! - [`rate`]: a budget per caller and per tool ([`RateLimit`], GCRA), kept in this process
//!   (`governor`) or shared by every replica (a [`RateStore`](crate::extend::RateStore) such
//!   as Redis): the caller is the verified principal when an auth layer put one in the
//!   request, else the client address from a configured header (the last entry, which the
//!   nearest proxy wrote), else the peer address. Over it: `429` with `Retry-After`, the
//!   IETF `RateLimit` and `RateLimit-Policy` headers, and a JSON-RPC error echoing the
//!   request's id.
//!
//! Both answer with a response and count each refusal in
//! `mcp_http_refusals_total{reason}`. Readiness does not follow overload: a replica that
//! turns unready when busy moves its load onto the others, which then turn unready too.

pub(crate) mod in_flight;
pub(crate) mod rate;

pub use rate::RateLimit;

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use serde_json::json;

use crate::protocol::{ErrorObject, ErrorResponse, RequestId};

/// A refusal of a limit: `status`, `Retry-After: secs`, and a JSON-RPC error (code
/// `-32603`, like the listen-stream limit) with the request id when known.
pub(crate) fn refusal(
    status: StatusCode,
    retry_after_secs: u64,
    id: Option<RequestId>,
    message: String,
    reason: &'static str,
) -> Response {
    let mut error = ErrorObject::internal_error(message);
    error.data = Some(json!({ "reason": reason, "retryAfterSecs": retry_after_secs }));
    let body = serde_json::to_vec(&ErrorResponse::new(id, error)).unwrap_or_default();
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::RETRY_AFTER, HeaderValue::from(retry_after_secs)),
        ],
        body,
    )
        .into_response()
}

pin_project_lite::pin_project! {
    /// A response body that holds `guard` (a slot of some limit) until the body ends or is
    /// dropped, so a streamed reply counts for as long as it streams.
    pub(crate) struct Guarded<B, G> {
        #[pin]
        inner: B,
        guard: Option<G>,
    }
}

impl<B, G> Guarded<B, G> {
    pub(crate) fn new(inner: B, guard: Option<G>) -> Self {
        Guarded { inner, guard }
    }
}

impl<B: Body, G> Body for Guarded<B, G> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) {
            // Ended: release the slot before hyper gets round to dropping the body.
            this.guard.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

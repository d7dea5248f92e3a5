//! HTTP-level rejections, one type per failure, each knowing its status and body.
//!
//! They answer before any JSON-RPC processing, so their bodies are JSON-RPC errors without an
//! `id` (code `-32600`), which clients can still read.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use crate::protocol::{ErrorObject, ErrorResponse};

/// A JSON body with a JSON-RPC error and no id.
pub(crate) fn error_body(status: StatusCode, error: ErrorObject) -> Response {
    let body = serde_json::to_vec(&ErrorResponse::new(None, error)).unwrap_or_default();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

macro_rules! rejection {
    ($(#[$doc:meta])* $name:ident, $status:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub(crate) struct $name(pub(crate) String);

        impl IntoResponse for $name {
            fn into_response(self) -> Response {
                error_body($status, ErrorObject::invalid_request(self.0))
            }
        }
    };
}

rejection!(
    /// `Host` or `Origin` not allowed (DNS-rebinding protection): 403.
    ForbiddenOrigin,
    StatusCode::FORBIDDEN
);
rejection!(
    /// `Accept` does not allow `application/json`: 406.
    NotAcceptable,
    StatusCode::NOT_ACCEPTABLE
);
rejection!(
    /// `Content-Type` present and not JSON: 415.
    UnsupportedMediaType,
    StatusCode::UNSUPPORTED_MEDIA_TYPE
);
rejection!(
    /// The body is larger than the configured limit: 413.
    PayloadTooLarge,
    StatusCode::PAYLOAD_TOO_LARGE
);
rejection!(
    /// The body did not arrive within the body timeout: 408.
    BodyTimeout,
    StatusCode::REQUEST_TIMEOUT
);
rejection!(
    /// The body could not be read: 400.
    BodyUnreadable,
    StatusCode::BAD_REQUEST
);

/// Any method but POST on the MCP endpoint: 405 with `Allow: POST`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MethodNotAllowed;

impl IntoResponse for MethodNotAllowed {
    fn into_response(self) -> Response {
        let mut r = error_body(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorObject::invalid_request(
                "Method not allowed: this endpoint speaks MCP 2026-07-28, which uses POST only",
            ),
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        r
    }
}

//! CORS for browser clients ([`StreamableHttp::cors`](super::StreamableHttp::cors)): tower-http's
//! [`CorsLayer`], its origins the endpoint's `Origin` allowlist.
//!
//! - Origins: exactly those the `Origin` guard accepts (the same [`AllowList`], the same
//!   check), mirrored into `Access-Control-Allow-Origin`; any other origin gets no
//!   `Access-Control-*` header (its preflight answers without them, the browser refuses, and
//!   the guard answers its request 403 anyway).
//! - Methods: `POST` (every request), `GET` and `DELETE` (a legacy session's stream and end).
//! - Request headers: `Content-Type`, `Authorization`, `MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name`, every `Mcp-Param-*` (a tool's mirrored parameters, named by the tool),
//!   `Mcp-Session-Id` and `Last-Event-ID`. tower-http lists header names or mirrors the
//!   request's; it cannot match a prefix. So a preflight's `Access-Control-Request-Headers`
//!   is first filtered to the allowed names ([`filter_requested_headers`]) and what is left
//!   is mirrored: a browser that asked for another header does not find it in the answer
//!   and refuses the request.
//! - Exposed response headers: `Mcp-Session-Id` (a legacy `initialize` answer) and
//!   `WWW-Authenticate` (a 401's challenge).
//!
//! No credentials mode: MCP clients send `Authorization` explicitly, not cookies.

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_HEADERS,
    WWW_AUTHENTICATE,
};
use http::{HeaderName, HeaderValue, Method, Request};
use tower::util::{MapRequest, MapResponse};
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

use super::guard::{self, AllowList};
use super::headers::SESSION_ID;
use crate::mirrored;

/// How long a browser may cache a preflight's answer.
const MAX_AGE: Duration = Duration::from_secs(3600);

/// Whether a browser may send the request header `name` (lower-case, as browsers list them;
/// compared ignoring case anyway).
fn allowed(name: &str) -> bool {
    const FIXED: &[&str] = &[
        "content-type",
        "authorization",
        mirrored::PROTOCOL_VERSION,
        mirrored::METHOD,
        mirrored::NAME,
        SESSION_ID,
        "last-event-id",
    ];
    let prefix = mirrored::PARAM_PREFIX;
    let param = name.len() > prefix.len()
        && name
            .get(..prefix.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(prefix));
    param || FIXED.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// A preflight's `Access-Control-Request-Headers` with only the allowed names left (the
/// header removed when none is), for the CORS layer to mirror.
pub(crate) fn filter_requested_headers(mut request: Request<Body>) -> Request<Body> {
    if request.method() != Method::OPTIONS {
        return request;
    }
    let headers = request.headers_mut();
    let requested: Vec<String> = headers
        .get_all(ACCESS_CONTROL_REQUEST_HEADERS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|name| allowed(name))
        .map(str::to_ascii_lowercase)
        .collect();
    headers.remove(ACCESS_CONTROL_REQUEST_HEADERS);
    if let Ok(kept) = HeaderValue::from_str(&requested.join(",")) {
        if !requested.is_empty() {
            headers.insert(ACCESS_CONTROL_REQUEST_HEADERS, kept);
        }
    }
    request
}

/// A response without `Access-Control-Allow-Origin` stripped of every other
/// `Access-Control-*` header: tower-http puts the allowed methods, headers and max age on
/// every preflight, and the exposed headers on every answer, whatever the origin; another
/// origin gets none of them here.
pub(crate) fn strip_unless_allowed(mut response: Response) -> Response {
    let headers = response.headers_mut();
    if !headers.contains_key(ACCESS_CONTROL_ALLOW_ORIGIN) {
        for name in [
            ACCESS_CONTROL_ALLOW_METHODS,
            ACCESS_CONTROL_ALLOW_HEADERS,
            ACCESS_CONTROL_MAX_AGE,
            ACCESS_CONTROL_EXPOSE_HEADERS,
        ] {
            headers.remove(name);
        }
    }
    response
}

/// What [`filter_requested_headers`] is, as a `MapRequest` holds it.
type Filter = fn(Request<Body>) -> Request<Body>;
/// What [`strip_unless_allowed`] is, as a `MapResponse` holds it.
type Strip = fn(Response) -> Response;

/// The CORS policy of an endpoint as a tower layer: [`filter_requested_headers`], then
/// tower-http's [`CorsLayer`] ([`layer`]).
#[derive(Clone)]
pub(crate) struct Cors {
    layer: CorsLayer,
}

impl Cors {
    /// The policy for an endpoint whose `Origin` allowlist is `origins`.
    pub(crate) fn new(origins: AllowList) -> Self {
        Cors {
            layer: layer(origins),
        }
    }
}

impl<S> tower::Layer<S> for Cors {
    type Service = MapRequest<MapResponse<tower_http::cors::Cors<S>, Strip>, Filter>;

    fn layer(&self, inner: S) -> Self::Service {
        let cors = MapResponse::new(self.layer.layer(inner), strip_unless_allowed as Strip);
        MapRequest::new(cors, filter_requested_headers as Filter)
    }
}

/// The CORS layer for an endpoint whose `Origin` allowlist is `origins`.
fn layer(origins: AllowList) -> CorsLayer {
    let any_host = AllowList::any();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            guard::check(None, Some(origin), None, &any_host, &origins).is_ok()
        }))
        .allow_methods([Method::POST, Method::GET, Method::DELETE])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([HeaderName::from_static(SESSION_ID), WWW_AUTHENTICATE])
        .max_age(MAX_AGE)
}

#[cfg(test)]
mod tests {
    use http::header::{AUTHORIZATION, CONTENT_TYPE};

    use super::*;

    fn preflight(requested: &[&str]) -> Request<Body> {
        let mut b = Request::builder().method(Method::OPTIONS).uri("/mcp");
        for r in requested {
            b = b.header(ACCESS_CONTROL_REQUEST_HEADERS, *r);
        }
        b.body(Body::empty()).unwrap()
    }

    fn kept(requested: &[&str]) -> Option<String> {
        filter_requested_headers(preflight(requested))
            .headers()
            .get(ACCESS_CONTROL_REQUEST_HEADERS)
            .map(|v| v.to_str().unwrap().to_owned())
    }

    #[test]
    fn only_the_mcp_request_headers_are_mirrored() {
        assert_eq!(
            kept(&["content-type,mcp-method, Mcp-Name,mcp-param-region,x-evil,mcp-param-"])
                .as_deref(),
            Some("content-type,mcp-method,mcp-name,mcp-param-region")
        );
        assert_eq!(
            kept(&[
                "authorization",
                "mcp-protocol-version,mcp-session-id,last-event-id"
            ])
            .as_deref(),
            Some("authorization,mcp-protocol-version,mcp-session-id,last-event-id")
        );
        assert_eq!(kept(&["x-evil, cookie"]), None);
        assert_eq!(kept(&[]), None);
        assert!(allowed(CONTENT_TYPE.as_str()) && allowed(AUTHORIZATION.as_str()));
    }

    #[test]
    fn other_methods_are_left_alone() {
        let mut r = preflight(&["x-evil"]);
        *r.method_mut() = Method::POST;
        let r = filter_requested_headers(r);
        assert_eq!(r.headers()[ACCESS_CONTROL_REQUEST_HEADERS], "x-evil");
    }
}

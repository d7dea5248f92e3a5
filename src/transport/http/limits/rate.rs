//! The rate limit per caller (a [`RateLimit`]): one GCRA token bucket per key in `governor`'s
//! keyed limiter. The key is the verified [`Principal`] (issuer and subject or client id)
//! when an auth layer put one in the request, else the last entry of the configured
//! client-address header, else the peer address (`ConnectInfo<SocketAddr>`, which the
//! [`Runner`](crate::Runner) provides when asked to).
//!
//! A refused request is answered `429 Too Many Requests` with `Retry-After` (whole seconds
//! until a token is back) and a JSON-RPC error echoing its id: the body is read for the id
//! (at most 64 KiB of it, for at most 5 s), not processed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::Response;
use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use http::{Extensions, HeaderMap, StatusCode};
use http_body_util::{BodyExt as _, Limited};

use super::{RateLimit, refusal};
use crate::handler::Principal;
use crate::observability::metrics::{self, Refusal};
use crate::protocol::RequestId;

/// Request bodies read at most this far for the id of a refused request.
const ID_READ_LIMIT: usize = 64 * 1024;
/// How long reading a refused request's body for its id may take.
const ID_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Checks between two sweeps of keys whose buckets are full again.
const SWEEP_EVERY: u64 = 4096;

/// The limit: one keyed limiter shared by every clone.
#[derive(Clone)]
pub(crate) struct RateGate {
    limiter: Arc<DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
    header: Option<http::HeaderName>,
    checks: Arc<AtomicU64>,
}

impl std::fmt::Debug for RateGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateGate")
            .field("header", &self.header)
            .field("keys", &self.limiter.len())
            .finish_non_exhaustive()
    }
}

impl RateGate {
    pub(crate) fn new(limit: &RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        RateGate {
            limiter: Arc::new(DefaultKeyedRateLimiter::dashmap(quota)),
            clock: DefaultClock::default(),
            header: limit.header.clone(),
            checks: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The caller's key, `None` when the request carries nothing to tell callers apart by.
    fn key(&self, headers: &HeaderMap, extensions: &Extensions) -> Option<String> {
        if let Some(p) = extensions.get::<Principal>() {
            if let Some(who) = p.subject.as_ref().or(p.client_id.as_ref()) {
                return Some(format!(
                    "principal {} {who}",
                    p.issuer.as_deref().unwrap_or("")
                ));
            }
        }
        if let Some(name) = &self.header {
            let last = headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.rsplit(','))
                .map(str::trim)
                .find(|v| !v.is_empty());
            if let Some(addr) = last {
                return Some(format!("address {addr}"));
            }
        }
        extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(peer)| format!("address {}", peer.ip()))
    }

    /// `Ok` when the caller may go on, else how long until it may.
    fn check(&self, key: String) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

/// The id of a JSON-RPC request body, if it has a readable one.
fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<RequestId>,
    }
    serde_json::from_slice::<Envelope>(body).ok()?.id
}

/// The 429 answer to a request (its `body`), whose caller may come back after `wait`.
pub(crate) async fn refuse(body: Body, wait: Duration) -> Response {
    metrics::record_refusal(Refusal::RateLimited);
    let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
    let read = Limited::new(body, ID_READ_LIMIT).collect();
    let id = match tokio::time::timeout(ID_READ_TIMEOUT, read).await {
        Ok(Ok(body)) => request_id(&body.to_bytes()),
        _ => None,
    };
    refusal(
        StatusCode::TOO_MANY_REQUESTS,
        secs,
        id,
        format!("Rate limit exceeded: retry in {secs} s"),
        "rate_limited",
    )
}

impl RateGate {
    /// `Ok` when the caller of a request (its headers and extensions) is within its rate
    /// (or cannot be told apart), else how long until it is.
    pub(crate) fn admit(
        &self,
        headers: &HeaderMap,
        extensions: &Extensions,
    ) -> Result<(), Duration> {
        match self.key(headers, extensions) {
            Some(key) => self.check(key),
            // Nothing to key on (no principal, header or peer address): not limited.
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use axum::extract::Request;

    use super::*;

    impl RateGate {
        fn key_of(&self, r: &Request) -> Option<String> {
            self.key(r.headers(), r.extensions())
        }
    }

    fn layer(header: Option<&'static str>) -> RateGate {
        let mut limit = RateLimit::per_second(NonZeroU32::new(1).unwrap());
        if let Some(h) = header {
            limit = limit.client_address_header(http::HeaderName::from_static(h));
        }
        RateGate::new(&limit)
    }

    #[test]
    fn the_principal_comes_first_then_the_header_then_the_peer() {
        let l = layer(Some("x-forwarded-for"));
        let mut r = Request::builder()
            .header("x-forwarded-for", "203.0.113.9, 10.0.0.1")
            .body(Body::empty())
            .unwrap();
        r.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([192, 0, 2, 1], 4000))));
        assert_eq!(l.key_of(&r).unwrap(), "address 10.0.0.1", "the last entry");
        r.extensions_mut()
            .insert(Principal::new("alice").with_issuer("https://as"));
        assert_eq!(l.key_of(&r).unwrap(), "principal https://as alice");
        let mut r = Request::builder().body(Body::empty()).unwrap();
        assert_eq!(l.key_of(&r), None);
        r.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([192, 0, 2, 1], 4000))));
        assert_eq!(l.key_of(&r).unwrap(), "address 192.0.2.1");
    }

    #[test]
    fn a_key_over_its_burst_waits_and_others_do_not() {
        let l = layer(None);
        assert!(l.check("a".into()).is_ok());
        let wait = l.check("a".into()).unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(l.check("b".into()).is_ok());
    }

    #[test]
    fn the_id_is_read_from_the_body_when_it_can_be() {
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            Some(RequestId::Number(7))
        );
        assert_eq!(request_id(b"not json"), None);
        assert_eq!(request_id(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
    }
}

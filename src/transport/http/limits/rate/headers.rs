//! What a rate-limited response says: the IETF `RateLimit-Policy` and `RateLimit` headers
//! (draft-ietf-httpapi-ratelimit-headers: `"caller";q=40;w=2` and `"caller";r=12;t=1`, one
//! item per budget charged), and the 429 answer with `Retry-After` and a JSON-RPC error
//! echoing the request's id.

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use http_body_util::{BodyExt as _, Limited};

use super::super::refusal;
use crate::backends::rate::{Budget, Verdict};
use crate::observability::metrics::{self, Refusal};
use crate::protocol::RequestId;

/// `RateLimit-Policy`: the budgets that apply.
pub(crate) const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// `RateLimit`: where the caller stands in each.
pub(crate) const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Request bodies read at most this far for the id of a refused request.
const ID_READ_LIMIT: usize = 64 * 1024;
/// How long reading a refused request's body for its id may take.
const ID_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Whole seconds, rounded up.
fn secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The `RateLimit-Policy` value for `budgets` (name, budget): the quota is the burst, the
/// window the time it takes to come back whole.
pub(crate) fn policy(budgets: &[(&str, Budget)]) -> HeaderValue {
    let items: Vec<String> = budgets
        .iter()
        .map(|(name, b)| {
            let window = secs(b.interval() * b.burst.get()).max(1);
            format!("\"{name}\";q={};w={window}", b.burst)
        })
        .collect();
    HeaderValue::from_str(&items.join(", ")).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `RateLimit` value: per budget, the requests left and the seconds until it is whole.
pub(crate) fn state(names: &[&str], verdicts: &[Verdict]) -> Option<HeaderValue> {
    let items: Vec<String> = names
        .iter()
        .zip(verdicts)
        .map(|(name, v)| format!("\"{name}\";r={};t={}", v.remaining, secs(v.reset)))
        .collect();
    HeaderValue::from_str(&items.join(", ")).ok()
}

/// The headers a response carries about its rate limit.
#[derive(Debug, Clone)]
pub(crate) struct RateHeaders {
    pub(crate) policy: HeaderValue,
    pub(crate) state: Option<HeaderValue>,
}

impl RateHeaders {
    /// Adds them to `headers`.
    pub(crate) fn apply(self, headers: &mut HeaderMap) {
        headers.insert(RATELIMIT_POLICY, self.policy);
        if let Some(s) = self.state {
            headers.insert(RATELIMIT, s);
        }
    }
}

/// The id of a JSON-RPC request body, if it has a readable one.
pub(crate) fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<RequestId>,
    }
    serde_json::from_slice::<Envelope>(body).ok()?.id
}

/// The 429 answer to a request (its `body`), whose caller may come back after `wait`.
pub(crate) async fn refuse(body: Body, wait: Duration, headers: RateHeaders) -> Response {
    metrics::record_refusal(Refusal::RateLimited);
    let secs = secs(wait).max(1);
    let read = Limited::new(body, ID_READ_LIMIT).collect();
    let id = match tokio::time::timeout(ID_READ_TIMEOUT, read).await {
        Ok(Ok(body)) => request_id(&body.to_bytes()),
        _ => None,
    };
    let mut response = refusal(
        StatusCode::TOO_MANY_REQUESTS,
        secs,
        id,
        format!("Rate limit exceeded: retry in {secs} s"),
        "rate_limited",
    );
    headers.apply(response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    #[test]
    fn ietf_fields() {
        let n = |n| NonZeroU32::new(n).unwrap();
        assert_eq!(
            policy(&[
                ("caller", Budget::new(n(20), n(40))),
                ("tool", Budget::new(n(3), n(1)))
            ]),
            "\"caller\";q=40;w=2, \"tool\";q=1;w=1"
        );
        let v = [
            Verdict::admitted(7, Duration::from_millis(1_500)),
            Verdict::refused(Duration::from_millis(300), Duration::from_secs(1)),
        ];
        assert_eq!(
            state(&["caller", "tool"], &v).unwrap(),
            "\"caller\";r=7;t=2, \"tool\";r=0;t=1"
        );
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

//! [`RateLimit`]: the budgets of the rate limit and where they are kept.

use std::num::NonZeroU32;
use std::sync::Arc;

use http::HeaderName;

use crate::backends::rate::{Budget, RateStore};

/// A rate limit per caller: `per_second` requests on average, bursts of up to `burst`; and
/// optionally per tool (a caller's `tools/call`s of one tool, told by the `Mcp-Name`
/// header), each tool's budget apart from the others.
///
/// The budgets live in this process by default (`governor`): with N replicas a caller then
/// gets N times its budget. Give every replica the same shared store
/// ([`RedisRateStore`](crate::backends::RedisRateStore)) and they enforce one budget; when
/// that store cannot be reached, each replica answers from its own in-process budgets
/// until it can again (counted in `mcp_rate_limit_fallbacks_total`, logged once per
/// outage), so an outage of the store loosens the limit rather than failing requests.
///
/// ```
/// use std::num::NonZeroU32;
/// use stateless_mcp::transport::http::RateLimit;
///
/// let n = |n| NonZeroU32::new(n).unwrap();
/// let limit = RateLimit::per_second(n(20))
///     .burst(n(40))
///     .tool("search", n(2), n(5))
///     .client_address_header(http::HeaderName::from_static("x-forwarded-for"));
/// assert_eq!(limit.burst_size().get(), 40);
/// ```
#[derive(Clone)]
#[must_use]
pub struct RateLimit {
    pub(crate) caller: Budget,
    pub(crate) header: Option<HeaderName>,
    pub(crate) tools: Vec<(String, Budget)>,
    pub(crate) store: Option<Arc<dyn RateStore>>,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("caller", &self.caller)
            .field("header", &self.header)
            .field("tools", &self.tools)
            .field("shared", &self.store.is_some())
            .finish()
    }
}

impl RateLimit {
    /// `n` requests per second per caller, in bursts of up to `n`.
    pub fn per_second(n: NonZeroU32) -> Self {
        RateLimit {
            caller: Budget::new(n, n),
            header: None,
            tools: Vec::new(),
            store: None,
        }
    }

    /// Bursts of up to `n` requests.
    pub fn burst(mut self, n: NonZeroU32) -> Self {
        self.caller.burst = n;
        self
    }

    /// A budget per caller for `tools/call` of the tool `name`: `per_second` on average,
    /// bursts of `burst`, charged besides the caller's own budget.
    pub fn tool(
        mut self,
        name: impl Into<String>,
        per_second: NonZeroU32,
        burst: NonZeroU32,
    ) -> Self {
        let name = name.into();
        self.tools.retain(|(n, _)| *n != name);
        self.tools.push((name, Budget::new(per_second, burst)));
        self
    }

    /// Keeps the budgets in `store`, shared by every replica using it (default: this
    /// process's memory).
    pub fn store(mut self, store: Arc<dyn RateStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Callers without a principal are told apart by the last entry of this header (e.g.
    /// `x-forwarded-for` or `x-real-ip` set by your proxy) instead of the peer address,
    /// which behind a proxy is the proxy's. Only name a header your proxy always sets.
    pub fn client_address_header(mut self, name: HeaderName) -> Self {
        self.header = Some(name);
        self
    }

    /// The average rate.
    pub fn rate(&self) -> NonZeroU32 {
        self.caller.per_second
    }

    /// The burst size.
    pub fn burst_size(&self) -> NonZeroU32 {
        self.caller.burst
    }

    /// Whether callers without a principal are keyed by the peer address (no header set).
    pub(crate) fn keys_on_peer(&self) -> bool {
        self.header.is_none()
    }
}

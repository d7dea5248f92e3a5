//! The rate limit per caller and per tool (a [`RateLimit`]). The caller is the verified
//! [`Principal`] (issuer and subject or client id) when an auth layer put one in the
//! request, else the last entry of the configured client-address header, else the peer
//! address (`ConnectInfo<SocketAddr>`, which the [`Runner`](crate::Runner) provides when
//! asked to); the tool is the `Mcp-Name` of a `tools/call` (the endpoint later checks it
//! against the body, so it cannot be used to dodge a tool's budget).
//!
//! Each check charges the caller's budget, and the tool's when it has one, in one call to
//! the [`RateStore`]: the shared one when configured (one Redis round trip), else, and
//! whenever the shared one fails, this process's own (`governor`). After a failure the
//! shared store is left alone for a second (one request then probes it), so an outage
//! costs neither latency nor a flood of errors; it is logged once when it starts and once
//! when it ends, and every check answered locally meanwhile is counted in
//! `mcp_rate_limit_fallbacks_total`.
//!
//! A refused request is answered `429 Too Many Requests` with `Retry-After` (whole seconds
//! until it fits), the `RateLimit-Policy` and `RateLimit` headers, and a JSON-RPC error
//! echoing its id: the body is read for the id (at most 64 KiB of it, for at most 5 s),
//! not processed. Admitted responses carry the two `RateLimit` headers too.

mod config;
mod headers;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use http::{Extensions, HeaderMap, HeaderValue};

pub use config::RateLimit;
pub(crate) use headers::{RateHeaders, refuse};

use crate::backends::rate::{Budget, MemoryRateStore, RateStore, Verdict};
use crate::handler::Principal;
use crate::observability::metrics;

/// How long the shared store is left alone after it failed.
const OUTAGE_PAUSE: Duration = Duration::from_secs(1);

/// Budget names in the `RateLimit` headers.
const CALLER: &str = "caller";
const TOOL: &str = "tool";

/// The limit: shared by every clone.
#[derive(Clone)]
pub(crate) struct RateGate {
    inner: Arc<Gate>,
}

struct Gate {
    caller: Budget,
    header: Option<http::HeaderName>,
    /// Tool budgets by name, with their `RateLimit-Policy` value (caller and tool).
    tools: HashMap<String, (Budget, HeaderValue)>,
    /// `RateLimit-Policy` of a request charged to the caller's budget alone.
    caller_policy: HeaderValue,
    shared: Option<Arc<dyn RateStore>>,
    local: MemoryRateStore,
    /// While the shared store is out: until when (ms since `epoch`) it is left alone; 0
    /// when it is not out.
    paused_until: AtomicU64,
    out: AtomicBool,
    epoch: Instant,
}

impl std::fmt::Debug for RateGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateGate")
            .field("caller", &self.inner.caller)
            .field("header", &self.inner.header)
            .field("shared", &self.inner.shared.is_some())
            .finish_non_exhaustive()
    }
}

/// The budgets one request is charged to: its tool's when it has one, and its caller's.
struct Charge<'a> {
    caller: String,
    tool: Option<(String, &'a (Budget, HeaderValue))>,
}

impl Charge<'_> {
    fn checks(&self, caller: Budget) -> Vec<(&str, Budget)> {
        // The tool's budget first: a refusal there then charges nothing to the caller's,
        // in every store.
        let mut checks = Vec::with_capacity(2);
        if let Some((key, (budget, _))) = &self.tool {
            checks.push((key.as_str(), *budget));
        }
        checks.push((self.caller.as_str(), caller));
        checks
    }
}

/// A request over a budget: how long until it fits, and the headers to answer with.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) wait: Duration,
    pub(crate) headers: RateHeaders,
}

impl RateGate {
    pub(crate) fn new(limit: &RateLimit) -> Self {
        let tools = limit
            .tools
            .iter()
            .map(|(name, b)| {
                let policy = headers::policy(&[(TOOL, *b), (CALLER, limit.caller)]);
                (name.clone(), (*b, policy))
            })
            .collect();
        RateGate {
            inner: Arc::new(Gate {
                caller: limit.caller,
                header: limit.header.clone(),
                tools,
                caller_policy: headers::policy(&[(CALLER, limit.caller)]),
                shared: limit.store.clone(),
                local: MemoryRateStore::default(),
                paused_until: AtomicU64::new(0),
                out: AtomicBool::new(false),
                epoch: Instant::now(),
            }),
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
        if let Some(name) = &self.inner.header {
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

    /// The tool a `tools/call` names in its headers, when that tool has a budget.
    fn tool<'a>(&'a self, headers: &HeaderMap) -> Option<(&'a str, &'a (Budget, HeaderValue))> {
        if self.inner.tools.is_empty()
            || headers.get("mcp-method").and_then(|v| v.to_str().ok()) != Some("tools/call")
        {
            return None;
        }
        let name = headers.get("mcp-name")?.to_str().ok()?;
        self.inner
            .tools
            .get_key_value(name)
            .map(|(k, v)| (k.as_str(), v))
    }

    /// Whether the budgets are kept in a shared store (checks then wait for it: use
    /// [`admit`](Self::admit)); else [`admit_now`](Self::admit_now) answers at once.
    pub(crate) fn is_shared(&self) -> bool {
        self.inner.shared.is_some()
    }

    /// What a request (its headers and extensions) is charged to; `None` when its caller
    /// cannot be told apart (not limited).
    fn charge<'a>(&'a self, headers: &HeaderMap, extensions: &Extensions) -> Option<Charge<'a>> {
        let caller = self.key(headers, extensions)?;
        let tool = self
            .tool(headers)
            .map(|(name, budget)| (format!("tool {name} {caller}"), budget));
        Some(Charge { caller, tool })
    }

    /// The headers for an admitted request's response, or why it is refused.
    fn judge(
        &self,
        charge: &Charge<'_>,
        verdicts: &[Verdict],
    ) -> Result<Option<RateHeaders>, Refused> {
        let (policy, names): (_, &[&str]) = match charge.tool {
            Some((_, (_, p))) => (p.clone(), &[TOOL, CALLER]),
            None => (self.inner.caller_policy.clone(), &[CALLER]),
        };
        let rate_headers = RateHeaders {
            policy,
            state: headers::state(names, verdicts),
        };
        if verdicts.iter().all(|v| v.admitted) {
            return Ok(Some(rate_headers));
        }
        let wait = verdicts
            .iter()
            .filter(|v| !v.admitted)
            .map(|v| v.retry_after)
            .max()
            .unwrap_or_default();
        Err(Refused {
            wait,
            headers: rate_headers,
        })
    }

    /// Charges a request to its budgets in this process's store: the headers for its
    /// response when admitted (`None` when not limited), or why not.
    pub(crate) fn admit_now(
        &self,
        headers: &HeaderMap,
        extensions: &Extensions,
    ) -> Result<Option<RateHeaders>, Refused> {
        let Some(charge) = self.charge(headers, extensions) else {
            return Ok(None);
        };
        let verdicts = self
            .inner
            .local
            .check_now(&charge.checks(self.inner.caller));
        self.judge(&charge, &verdicts)
    }

    /// Like [`admit_now`](Self::admit_now), in the shared store when there is one (and
    /// this process's when it is out).
    pub(crate) async fn admit(
        &self,
        headers: &HeaderMap,
        extensions: &Extensions,
    ) -> Result<Option<RateHeaders>, Refused> {
        let Some(charge) = self.charge(headers, extensions) else {
            return Ok(None);
        };
        let verdicts = self.check(&charge.checks(self.inner.caller)).await;
        self.judge(&charge, &verdicts)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.inner.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The verdicts of the shared store, or of the local one when the shared one is out.
    async fn check(&self, checks: &[(&str, Budget)]) -> Vec<Verdict> {
        let g = &self.inner;
        let Some(shared) = &g.shared else {
            return g.local.check_now(checks);
        };
        let now = self.now_ms();
        let paused = g.paused_until.load(Ordering::Acquire);
        // Out and paused, or another request is probing it already: answer locally.
        if paused != 0
            && (now < paused
                || g.paused_until
                    .compare_exchange(
                        paused,
                        now + pause_ms(),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_err())
        {
            metrics::record_rate_limit_fallback();
            return g.local.check_now(checks);
        }
        match shared.check(checks).await {
            Ok(v) if v.len() == checks.len() => {
                if g.out.swap(false, Ordering::AcqRel) {
                    tracing::info!("the shared rate store is back: budgets are shared again");
                }
                g.paused_until.store(0, Ordering::Release);
                v
            }
            other => {
                g.paused_until
                    .store(self.now_ms() + pause_ms(), Ordering::Release);
                if !g.out.swap(true, Ordering::AcqRel) {
                    let error = match other {
                        Err(e) => e.to_string(),
                        Ok(_) => "wrong number of verdicts".to_owned(),
                    };
                    tracing::warn!(%error, "the shared rate store is unreachable: each replica enforces its own budgets until it is back");
                }
                metrics::record_rate_limit_fallback();
                g.local.check_now(checks)
            }
        }
    }
}

fn pause_ms() -> u64 {
    u64::try_from(OUTAGE_PAUSE.as_millis()).unwrap_or(1000)
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use axum::body::Body;
    use axum::extract::Request;
    use futures_util::future::BoxFuture;

    use super::*;
    use crate::Error;

    impl RateGate {
        fn key_of(&self, r: &Request) -> Option<String> {
            self.key(r.headers(), r.extensions())
        }
    }

    fn n(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    fn gate(header: Option<&'static str>) -> RateGate {
        let mut limit = RateLimit::per_second(n(1)).tool("search", n(1), n(2));
        if let Some(h) = header {
            limit = limit.client_address_header(http::HeaderName::from_static(h));
        }
        RateGate::new(&limit)
    }

    fn request(tool: Option<&str>) -> Request {
        let mut b = Request::builder().header("x-forwarded-for", "203.0.113.9");
        if let Some(t) = tool {
            b = b.header("mcp-method", "tools/call").header("mcp-name", t);
        }
        b.body(Body::empty()).unwrap()
    }

    #[test]
    fn the_principal_comes_first_then_the_header_then_the_peer() {
        let l = gate(Some("x-forwarded-for"));
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

    #[tokio::test]
    async fn a_caller_over_its_budget_waits_and_tools_have_their_own() {
        let g = RateGate::new(
            &RateLimit::per_second(n(1))
                .burst(n(3))
                .tool("search", n(1), n(1))
                .client_address_header(http::HeaderName::from_static("x-forwarded-for")),
        );
        let admit = |r: Request| {
            let g = g.clone();
            async move { g.admit(r.headers(), r.extensions()).await }
        };
        let ok = admit(request(Some("search"))).await.unwrap().unwrap();
        assert_eq!(ok.policy, "\"tool\";q=1;w=1, \"caller\";q=3;w=3");
        assert_eq!(ok.state.unwrap(), "\"tool\";r=0;t=1, \"caller\";r=2;t=1");
        // The tool's budget is spent; the caller's is not.
        let refused = admit(request(Some("search"))).await.unwrap_err();
        assert!(refused.wait > Duration::ZERO && refused.wait <= Duration::from_secs(1));
        assert!(admit(request(Some("other"))).await.is_ok(), "another tool");
        assert!(admit(request(None)).await.is_ok());
        let refused = admit(request(None)).await.unwrap_err();
        assert_eq!(refused.headers.policy, "\"caller\";q=3;w=3");
    }

    /// A shared store that always fails, counting its calls.
    struct Down(AtomicU64);

    impl RateStore for Down {
        fn check<'a>(
            &'a self,
            _: &'a [(&'a str, Budget)],
        ) -> BoxFuture<'a, Result<Vec<Verdict>, Error>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Err(Error::unavailable("rate store", "down")) })
        }
    }

    #[tokio::test]
    async fn an_unreachable_store_falls_back_to_local_budgets_and_is_left_alone() {
        let down = Arc::new(Down(AtomicU64::new(0)));
        let g = RateGate::new(
            &RateLimit::per_second(n(1))
                .burst(n(2))
                .store(down.clone())
                .client_address_header(http::HeaderName::from_static("x-forwarded-for")),
        );
        let r = request(None);
        let mut admitted = 0;
        for _ in 0..50 {
            if g.admit(r.headers(), r.extensions()).await.is_ok() {
                admitted += 1;
            }
        }
        assert_eq!(admitted, 2, "the local budget holds");
        assert_eq!(
            down.0.load(Ordering::SeqCst),
            1,
            "probed once, then left alone"
        );
    }
}

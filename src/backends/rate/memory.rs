//! The in-process rate store: `governor`'s keyed GCRA limiters, one per budget.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use governor::clock::{Clock as _, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use super::{Budget, RateStore, Verdict};
use crate::Error;

type Keyed =
    RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock, StateInformationMiddleware>;

/// Checks between two sweeps of keys whose buckets are full again.
const SWEEP_EVERY: u64 = 4096;

/// A [`RateStore`] in this process's memory (`governor`): enough for one replica, whose
/// budgets the others do not see. Keys whose budgets are full again are swept now and
/// then, so memory follows the callers active within one burst's time.
///
/// ```
/// use std::num::NonZeroU32;
/// use stateless_mcp::backends::{Budget, MemoryRateStore};
/// use stateless_mcp::extend::RateStore;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryRateStore::default();
/// let one = Budget::new(NonZeroU32::MIN, NonZeroU32::MIN);
/// assert!(store.check(&[("alice", one)]).await.unwrap()[0].admitted);
/// assert!(!store.check(&[("alice", one)]).await.unwrap()[0].admitted);
/// # });
/// ```
#[derive(Default)]
pub struct MemoryRateStore {
    limiters: RwLock<HashMap<Budget, Arc<Keyed>>>,
    clock: DefaultClock,
    checks: AtomicU64,
}

impl std::fmt::Debug for MemoryRateStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRateStore").finish_non_exhaustive()
    }
}

impl MemoryRateStore {
    fn limiter(&self, budget: Budget) -> Arc<Keyed> {
        if let Some(l) = self
            .limiters
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&budget)
        {
            return l.clone();
        }
        let mut all = self.limiters.write().unwrap_or_else(|p| p.into_inner());
        all.entry(budget)
            .or_insert_with(|| {
                let quota = Quota::per_second(budget.per_second).allow_burst(budget.burst);
                Arc::new(
                    RateLimiter::dashmap_with_clock(quota, self.clock.clone())
                        .with_middleware::<StateInformationMiddleware>(),
                )
            })
            .clone()
    }

    fn sweep(&self) {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            for l in self
                .limiters
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .values()
            {
                l.retain_recent();
                l.shrink_to_fit();
            }
        }
    }

    /// The verdicts of one check, synchronously.
    pub(crate) fn check_now(&self, checks: &[(&str, Budget)]) -> Vec<Verdict> {
        self.sweep();
        let mut out = Vec::with_capacity(checks.len());
        let mut refused = false;
        for (key, budget) in checks {
            let interval = budget.interval();
            if refused {
                // Not charged after a refusal (see the contract).
                out.push(Verdict::refused(Duration::ZERO, Duration::ZERO));
                continue;
            }
            let limiter = self.limiter(*budget);
            out.push(match limiter.check_key(&(*key).to_owned()) {
                Ok(snapshot) => {
                    let remaining = snapshot.remaining_burst_capacity();
                    let used = budget.burst.get() - remaining.min(budget.burst.get());
                    Verdict::admitted(remaining, interval * used)
                }
                Err(not_until) => {
                    refused = true;
                    let wait = not_until.wait_time_from(self.clock.now());
                    Verdict::refused(wait, interval * budget.burst.get())
                }
            });
        }
        out
    }
}

impl RateStore for MemoryRateStore {
    fn check<'a>(
        &'a self,
        checks: &'a [(&'a str, Budget)],
    ) -> BoxFuture<'a, Result<Vec<Verdict>, Error>> {
        let verdicts = self.check_now(checks);
        Box::pin(async move { Ok(verdicts) })
    }
}

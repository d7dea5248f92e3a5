//! A circuit breaker for one shared-store connection: once the store is known to be
//! unreachable, calls fail at once instead of each waiting for its own timeout.
//!
//! States:
//! - **closed**: calls go to the store.
//! - **open**: a call just failed for want of the store (a lost connection, a refused one, a
//!   timeout). Calls are refused at once, without touching the network. One background task
//!   probes the store every [`Breaker::retry_every`]; only one probe runs at a time.
//! - back to **closed** as soon as a probe is answered.
//!
//! Answers that come from the store itself (a script error, a wrong type) never open it: the
//! store is there. Nothing is queued while it is open; callers answer "unavailable, retry"
//! (HTTP 503 with `Retry-After: 1`) and the first call after the probe succeeds goes through.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;

/// A probe of the store: `true` when it answered.
pub(crate) type Probe = Box<dyn Fn() -> BoxFuture<'static, bool> + Send + Sync>;

/// How often an open breaker probes its store, by default.
pub(crate) const RETRY_EVERY: Duration = Duration::from_millis(500);

/// One store connection's breaker; clones share it.
#[derive(Clone)]
pub(crate) struct Breaker {
    inner: Arc<Inner>,
}

struct Inner {
    /// Open: calls are refused at once.
    open: AtomicBool,
    /// Asks the store whether it answers again.
    probe: Probe,
    /// How long between two probes.
    retry_every: Duration,
    /// The metric label of the store (`sessions`, `tasks`, …).
    store: &'static str,
    /// Where the probing task runs.
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for Breaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Breaker")
            .field("store", &self.inner.store)
            .field("open", &self.is_open())
            .finish_non_exhaustive()
    }
}

impl Breaker {
    /// A closed breaker for `store` that, once open, runs `probe` every `retry_every` on
    /// `runtime` until it answers `true`.
    pub(crate) fn new(
        store: &'static str,
        retry_every: Duration,
        runtime: tokio::runtime::Handle,
        probe: Probe,
    ) -> Self {
        Breaker {
            inner: Arc::new(Inner {
                open: AtomicBool::new(false),
                probe,
                retry_every,
                store,
                runtime,
            }),
        }
    }

    /// Whether calls are refused at once now.
    pub(crate) fn is_open(&self) -> bool {
        self.inner.open.load(Ordering::Acquire)
    }

    /// How long between two probes while open.
    #[cfg(test)]
    pub(crate) fn retry_every(&self) -> Duration {
        self.inner.retry_every
    }

    /// The store's metric label.
    pub(crate) fn store(&self) -> &'static str {
        self.inner.store
    }

    /// A call failed for want of the store: opens the breaker (and starts the one probing
    /// task) unless it is open already.
    pub(crate) fn trip(&self) {
        if self.inner.open.swap(true, Ordering::AcqRel) {
            return;
        }
        crate::observability::metrics::record_store_circuit(self.inner.store, true);
        tracing::warn!(
            store = self.inner.store,
            "the shared store did not answer; refusing its calls at once until a probe succeeds"
        );
        let weak = Arc::downgrade(&self.inner);
        self.inner.runtime.spawn(probe_until_answered(weak));
    }
}

/// Probes every `retry_every` until the store answers, then closes the breaker. Ends early
/// when every handle on the breaker is gone.
async fn probe_until_answered(weak: Weak<Inner>) {
    loop {
        let Some(every) = weak.upgrade().map(|i| i.retry_every) else {
            return;
        };
        tokio::time::sleep(every).await;
        let Some(probe) = weak.upgrade().map(|i| (i.probe)()) else {
            return;
        };
        if probe.await {
            if let Some(inner) = weak.upgrade() {
                inner.open.store(false, Ordering::Release);
                crate::observability::metrics::record_store_circuit(inner.store, false);
                tracing::info!(store = inner.store, "the shared store answers again");
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// A breaker whose probe answers what `up` says, counting probes in `probes`.
    fn breaker(up: &Arc<AtomicBool>, probes: &Arc<AtomicUsize>) -> Breaker {
        let (up, probes) = (up.clone(), probes.clone());
        Breaker::new(
            "test",
            Duration::from_millis(500),
            tokio::runtime::Handle::current(),
            Box::new(move || {
                probes.fetch_add(1, Ordering::SeqCst);
                let answer = up.load(Ordering::SeqCst);
                Box::pin(async move {
                    // A probe takes a while, as a round trip does.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    answer
                })
            }),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn it_opens_on_failure_probes_once_at_a_time_and_closes_when_answered() {
        let (up, probes) = (Arc::new(AtomicBool::new(false)), Arc::default());
        let b = breaker(&up, &probes);
        assert!(!b.is_open(), "closed at first");
        assert_eq!(probes.load(Ordering::SeqCst), 0, "no probe while closed");
        b.trip();
        assert!(b.is_open());
        // More failures while open start no second prober.
        b.trip();
        b.clone().trip();
        tokio::time::sleep(Duration::from_millis(450)).await;
        assert_eq!(probes.load(Ordering::SeqCst), 0, "the first probe waits");
        // Down: one probe per interval (500 ms + the 100 ms it takes), never two at once.
        tokio::time::sleep(Duration::from_millis(3_000)).await;
        let n = probes.load(Ordering::SeqCst);
        assert!((4..=6).contains(&n), "{n} probes in 3.45 s");
        assert!(b.is_open(), "still open while the store is down");
        up.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert!(!b.is_open(), "closed once a probe is answered");
        let n = probes.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(probes.load(Ordering::SeqCst), n, "no probing while closed");
        // And it opens again on the next failure.
        up.store(false, Ordering::SeqCst);
        b.trip();
        assert!(b.is_open());
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert!(b.is_open());
        up.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert!(!b.is_open());
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_every_handle_ends_the_probing() {
        let (up, probes) = (Arc::new(AtomicBool::new(false)), Arc::default());
        let b = breaker(&up, &probes);
        b.trip();
        tokio::time::sleep(Duration::from_millis(1_300)).await;
        let n = probes.load(Ordering::SeqCst);
        assert!(n >= 1);
        drop(b);
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(
            probes.load(Ordering::SeqCst) <= n + 1,
            "the prober outlived its breaker"
        );
    }

    #[tokio::test]
    async fn its_settings_read_back() {
        let (up, probes) = (Arc::new(AtomicBool::new(true)), Arc::default());
        let b = breaker(&up, &probes);
        assert_eq!(b.retry_every(), Duration::from_millis(500));
        assert_eq!(b.store(), "test");
        assert!(format!("{b:?}").contains("open: false"));
    }
}

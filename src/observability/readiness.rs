//! [`Readiness`]: whether this replica should receive traffic, and why not.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Whether this replica is ready for traffic: not draining, and no component has reported a
/// "not ready" condition. Cheap to clone (an `Arc`); every clone sees the same state.
///
/// Components that the replica cannot serve without (the notification bus, …) register a
/// named condition and flip it as their state changes:
///
/// ```
/// use stateless_mcp::observability::Readiness;
///
/// let readiness = Readiness::new();
/// let bus = readiness.condition("bus");
/// bus.not_ready("connecting to redis");
/// assert!(!readiness.is_ready());
/// bus.ready();
/// assert!(readiness.is_ready());
/// readiness.set_draining();
/// assert_eq!(readiness.check().unwrap_err(), vec!["draining".to_owned()]);
/// ```
///
/// A component the replica can serve without, in a degraded way, registers an
/// [advisory](Readiness::advisory) condition instead: its state is reported on `/readyz`
/// (`"degraded": […]`) but never makes the replica unready. That is the choice for a broker
/// every replica shares: were it required, its outage would fail readiness on every replica
/// at once and empty the load balancer, although most requests still work without it.
///
/// ```
/// use stateless_mcp::observability::Readiness;
///
/// let readiness = Readiness::new();
/// let bus = readiness.advisory("bus");
/// bus.not_ready("redis unreachable");
/// assert!(readiness.is_ready());
/// assert_eq!(readiness.degraded(), vec!["bus: redis unreachable".to_owned()]);
/// ```
#[derive(Clone, Default)]
pub struct Readiness {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    draining: AtomicBool,
    /// Conditions currently not ready: name → reason.
    not_ready: Mutex<BTreeMap<String, String>>,
    /// Advisory conditions currently not ready: name → reason.
    degraded: Mutex<BTreeMap<String, String>>,
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readiness")
            .field("draining", &self.is_draining())
            .field("not_ready", &self.reasons())
            .field("degraded", &self.degraded())
            .finish()
    }
}

impl Readiness {
    /// A ready state: not draining, no conditions.
    pub fn new() -> Self {
        Readiness::default()
    }

    /// Marks the replica as draining: from now on it is never ready again.
    pub fn set_draining(&self) {
        self.inner.draining.store(true, Ordering::Release);
    }

    /// Whether [`Readiness::set_draining`] was called.
    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::Acquire)
    }

    /// A named condition, initially ready. Registering the same name twice gives handles to
    /// the same condition.
    pub fn condition(&self, name: impl Into<String>) -> Condition {
        Condition {
            readiness: self.clone(),
            name: name.into(),
            advisory: false,
        }
    }

    /// A named advisory condition, initially ready: reported by [`Readiness::degraded`] (and
    /// on `/readyz`) while it does not hold, without making the replica unready.
    pub fn advisory(&self, name: impl Into<String>) -> Condition {
        Condition {
            readiness: self.clone(),
            name: name.into(),
            advisory: true,
        }
    }

    /// Every advisory condition that does not hold, as `name: reason`, in name order.
    pub fn degraded(&self) -> Vec<String> {
        let map = self
            .inner
            .degraded
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        map.iter()
            .map(|(name, why)| format!("{name}: {why}"))
            .collect()
    }

    /// Whether the replica is ready.
    pub fn is_ready(&self) -> bool {
        self.check().is_ok()
    }

    /// `Ok` when ready; otherwise every reason, `draining` first, then `name: reason` per
    /// condition in name order.
    pub fn check(&self) -> Result<(), Vec<String>> {
        let reasons = self.reasons();
        if reasons.is_empty() {
            Ok(())
        } else {
            Err(reasons)
        }
    }

    fn reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.is_draining() {
            reasons.push("draining".to_owned());
        }
        let map = self
            .inner
            .not_ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        reasons.extend(map.iter().map(|(name, why)| format!("{name}: {why}")));
        reasons
    }

    fn set(&self, name: &str, advisory: bool, reason: Option<String>) {
        let map = if advisory {
            &self.inner.degraded
        } else {
            &self.inner.not_ready
        };
        let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
        match reason {
            Some(why) => {
                map.insert(name.to_owned(), why);
            }
            None => {
                map.remove(name);
            }
        }
    }
}

/// One named readiness condition (see [`Readiness::condition`] and
/// [`Readiness::advisory`]). Dropping it leaves its last state in place.
#[derive(Debug, Clone)]
pub struct Condition {
    readiness: Readiness,
    name: String,
    advisory: bool,
}

impl Condition {
    /// The condition holds: it no longer keeps the replica from being ready.
    pub fn ready(&self) {
        self.readiness.set(&self.name, self.advisory, None);
    }

    /// The condition does not hold: the replica is not ready (an advisory condition: is
    /// degraded), and `/readyz` says `reason`.
    pub fn not_ready(&self, reason: impl Into<String>) {
        self.readiness
            .set(&self.name, self.advisory, Some(reason.into()));
    }

    /// Whether this condition only reports (see [`Readiness::advisory`]).
    pub fn is_advisory(&self) -> bool {
        self.advisory
    }

    /// The condition's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_and_draining_combine() {
        let r = Readiness::new();
        assert!(r.is_ready());
        let a = r.condition("bus");
        let b = r.clone().condition("cache");
        a.not_ready("disconnected");
        b.not_ready("warming");
        assert_eq!(
            r.check().unwrap_err(),
            vec!["bus: disconnected".to_owned(), "cache: warming".to_owned()]
        );
        a.ready();
        b.ready();
        assert!(r.is_ready());
        r.set_draining();
        assert!(!r.is_ready());
        assert!(r.is_draining());
    }

    #[test]
    fn advisory_conditions_report_without_failing_readiness() {
        let r = Readiness::new();
        let bus = r.advisory("bus");
        let cache = r.condition("cache");
        bus.not_ready("disconnected");
        assert!(r.is_ready());
        assert_eq!(r.degraded(), vec!["bus: disconnected".to_owned()]);
        cache.not_ready("warming");
        assert_eq!(r.check().unwrap_err(), vec!["cache: warming".to_owned()]);
        bus.ready();
        cache.ready();
        assert!(r.is_ready() && r.degraded().is_empty());
    }
}

//! How a server runs tasks: lease, retention, polling hint and limits.

use std::time::Duration;

/// The shortest and longest `ttlMs` a server accepts for its tasks.
pub(crate) const TTL_BOUNDS: (Duration, Duration) =
    (Duration::from_secs(1), Duration::from_secs(30 * 24 * 3600));

/// How a server runs tasks ([`ServerBuilder::task_settings`](crate::ServerBuilder::task_settings)).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use stateless_mcp::Server;
/// use stateless_mcp::tasks::{MemoryTaskStore, TaskSettings};
///
/// let settings = TaskSettings::default()
///     .lease(Duration::from_secs(10))
///     .ttl(Duration::from_secs(3600))
///     .max_running(64)
///     .max_result_bytes(1 << 20);
/// let server = Server::builder()
///     .task_store(Arc::new(MemoryTaskStore::default()))
///     .task_settings(settings)
///     .build()
///     .unwrap();
/// # drop(server);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskSettings {
    /// How long the replica running a task holds it without renewing (it renews every
    /// third of this). A replica that dies leaves its tasks `working` for at most this long
    /// before any replica fails them.
    pub lease: Duration,
    /// How long a task stays readable after its last change (`ttlMs`), within
    /// the bounds (1 s to 30 days).
    pub ttl: Duration,
    /// The polling interval suggested to clients (`pollIntervalMs`).
    pub poll_interval: Duration,
    /// Task handlers one replica runs at once; a task-capable call beyond it is refused
    /// (`-32603` with `data.reason = "max_running"`, counted in `mcp_tasks_rejected_total`).
    pub max_running: usize,
    /// The largest tool result a task keeps, serialized; a bigger one fails the task.
    pub max_result_bytes: usize,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            lease: Duration::from_secs(30),
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(500),
            max_running: 1_000,
            max_result_bytes: 1024 * 1024,
        }
    }
}

impl TaskSettings {
    /// Settings with this lease (at least 300 ms).
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// Settings with this retention, clamped to the bounds (1 s to 30 days).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.clamp(TTL_BOUNDS.0, TTL_BOUNDS.1);
        self
    }

    /// Settings with this polling hint (at least 1 ms).
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Settings with this many running tasks per replica at most (at least 1).
    #[must_use]
    pub fn max_running(mut self, n: usize) -> Self {
        self.max_running = n.max(1);
        self
    }

    /// Settings with this largest kept result.
    #[must_use]
    pub fn max_result_bytes(mut self, n: usize) -> Self {
        self.max_result_bytes = n;
        self
    }

    /// How often the replica running a task renews its lease.
    pub fn renew_every(&self) -> Duration {
        self.lease / 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_stay_within_bounds() {
        let s = TaskSettings::default()
            .ttl(Duration::ZERO)
            .lease(Duration::ZERO)
            .max_running(0);
        assert_eq!(s.ttl, TTL_BOUNDS.0);
        assert_eq!(s.lease, Duration::from_millis(300));
        assert_eq!(s.max_running, 1);
        assert_eq!(s.renew_every(), Duration::from_millis(100));
        let s = TaskSettings::default().ttl(Duration::from_secs(u64::MAX / 4));
        assert_eq!(s.ttl, TTL_BOUNDS.1);
    }
}

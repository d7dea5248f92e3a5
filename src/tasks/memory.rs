//! The in-process task store.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;

use super::record::{TaskRecord, now_ms};
use super::{Replaced, TaskStore};
use crate::Error;

/// The most tasks a [`MemoryTaskStore`] holds by default.
pub(crate) const DEFAULT_MAX_TASKS: usize = 100_000;

/// A [`TaskStore`] in this process's memory: enough for one replica (other replicas do not
/// see its tasks, and they die with the process). Expired tasks are dropped as new ones
/// arrive; when it holds `max_tasks` live tasks it refuses new ones with
/// [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable).
///
/// ```
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::tasks::MemoryTaskStore;
///
/// let store = Arc::new(MemoryTaskStore::new(10_000));
/// let server = Server::builder().task_store(store.clone()).build().unwrap();
/// assert!(store.is_empty());
/// # drop(server);
/// ```
#[derive(Debug)]
pub struct MemoryTaskStore {
    max_tasks: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    /// Size after the last sweep of expired tasks; the next sweep happens at twice that.
    swept_at: usize,
}

#[derive(Debug)]
struct Entry {
    task: TaskRecord,
    expires_at: u64,
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_TASKS)
    }
}

impl MemoryTaskStore {
    /// A store holding at most `max_tasks` live tasks.
    pub fn new(max_tasks: usize) -> Self {
        MemoryTaskStore {
            max_tasks: max_tasks.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// How many tasks it holds now (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn create_now(&self, task: &TaskRecord, now: u64) -> Result<bool, Error> {
        let mut inner = self.lock();
        if inner
            .tasks
            .get(&task.id)
            .is_some_and(|e| e.expires_at > now)
        {
            return Ok(false);
        }
        let len = inner.tasks.len();
        if len >= self.max_tasks || len >= (inner.swept_at * 2).max(1024) {
            inner.tasks.retain(|_, e| e.expires_at > now);
            inner.swept_at = inner.tasks.len();
            if inner.tasks.len() >= self.max_tasks {
                return Err(Error::unavailable(
                    "the task store is full",
                    format!("{} tasks are alive", self.max_tasks),
                ));
            }
        }
        inner.tasks.insert(
            task.id.clone(),
            Entry {
                task: task.clone(),
                expires_at: task.expires_at(now),
            },
        );
        Ok(true)
    }

    fn get_now(&self, id: &str, now: u64) -> Option<TaskRecord> {
        let inner = self.lock();
        let entry = inner.tasks.get(id).filter(|e| e.expires_at > now)?;
        Some(entry.task.clone())
    }

    fn replace_now(&self, task: &TaskRecord, now: u64) -> Replaced {
        let mut inner = self.lock();
        let Some(entry) = inner.tasks.get_mut(&task.id).filter(|e| e.expires_at > now) else {
            return Replaced::Gone;
        };
        if entry.task.status.is_terminal() || entry.task.version + 1 != task.version {
            return Replaced::Stale(Box::new(entry.task.clone()));
        }
        entry.task = task.clone();
        entry.expires_at = task.expires_at(now);
        Replaced::Done
    }

    fn lapsed_now(&self, before: u64, limit: usize, now: u64) -> Vec<String> {
        let inner = self.lock();
        inner
            .tasks
            .values()
            .filter(|e| e.expires_at > now && e.task.lease_lapsed(before))
            .take(limit)
            .map(|e| e.task.id.clone())
            .collect()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, task: &'a TaskRecord) -> BoxFuture<'a, Result<bool, Error>> {
        let r = self.create_now(task, now_ms());
        Box::pin(async move { r })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, Error>> {
        let r = self.get_now(id, now_ms());
        Box::pin(async move { Ok(r) })
    }

    fn replace<'a>(&'a self, task: &'a TaskRecord) -> BoxFuture<'a, Result<Replaced, Error>> {
        let r = self.replace_now(task, now_ms());
        Box::pin(async move { Ok(r) })
    }

    fn lapsed(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<Vec<String>, Error>> {
        let r = self.lapsed_now(now_ms, limit, now_ms);
        Box::pin(async move { Ok(r) })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tasks::TaskWork;

    fn task(id: &str, ttl_ms: u64) -> TaskRecord {
        TaskRecord::new(id, TaskWork::new("t", json!({})), ttl_ms, 100)
    }

    #[test]
    fn memory_stays_bounded_and_expired_tasks_make_room() {
        let store = MemoryTaskStore::new(2);
        let t0 = 1_000_000;
        assert!(store.create_now(&task("a", 1_000), t0).unwrap());
        assert!(store.create_now(&task("b", 1_000), t0).unwrap());
        let e = store.create_now(&task("c", 1_000), t0).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable);
        let later = t0 + 1_001;
        assert!(store.get_now("a", later).is_none());
        assert!(store.create_now(&task("c", 1_000), later).unwrap());
        assert_eq!(store.len(), 1);
    }
}

//! The Tasks extension (`io.modelcontextprotocol/tasks`), and the task stores where its
//! tasks live, so that every replica sees the same task.
//!
//! A task-capable tool called by a client that declared the extension returns a task handle
//! at once; the client then follows the task with `tasks/get`, answers its questions with
//! `tasks/update` and stops it with `tasks/cancel`, each possibly on another replica than
//! the one running the handler. What they all agree on is the [`TaskRecord`] in a
//! [`TaskStore`].
//!
//! # Layout
//!
//! The extension is a wing beside the server's core: it holds a `Server` and calls its
//! services, and plugs into the core's ladder and `tools/call` as the core's
//! `server::family::TaskFamily`. The core never names it.
//!
//! - `state`: the replica's task state (`Tasks`, the family the builder plugs in): running
//!   handlers, leases, and the upkeep (bus watcher, lapsed-lease sweeper, shutdown).
//! - `runner`: running a tool as a task (creation, lease, settling, resume).
//! - `methods`: the `tasks/get`, `tasks/update` and `tasks/cancel` methods.
//! - `record`, `settings`: what a task is and how long it lives; `memory`, `redis`: the
//!   stores, which know nothing of the server.
//!
//! # The store contract
//!
//! Every [`TaskStore`] keeps these promises (checked by one contract test suite run against
//! each backend, a real `redis-server` included):
//!
//! - **Atomic transitions, no lost update.** [`TaskStore::replace`] writes a record only over
//!   the version it was read at (`version - 1`); a concurrent writer that came first makes it
//!   answer [`Replaced::Stale`] with what the store holds now, never a silent overwrite.
//!   [`update`](trait.TaskStore.html#method.update) is the read-modify-write loop built on
//!   it, and [`update_from`](trait.TaskStore.html#method.update_from) the same loop started
//!   from a record the caller holds already (no read unless another writer came first).
//! - **Terminal states are final.** Once a record is `completed`, `failed` or `cancelled`, no
//!   replace changes it ([`Replaced::Stale`] with the terminal record).
//! - **Unique ids.** [`TaskStore::create`] refuses an id that exists.
//! - **Expiry after `ttlMs`.** A record stays readable for at least its
//!   [`ttl_ms`](TaskRecord::ttl_ms) after its last write (and while its lease lasts), and is
//!   forgotten some time after that; reading it then answers `None`, as for an id that never
//!   existed.
//! - **Lapsed leases are found.** [`TaskStore::lapsed`] lists the `working` tasks whose
//!   [`lease`](TaskRecord::lease) ended; [`fail_lapsed`] turns them `failed`.
//! - **Failures are errors.** A store that cannot answer says so ([`ErrorKind::Unavailable`](
//!   crate::ErrorKind::Unavailable)); it never answers "unknown" for "unreachable".
//!
//! # Backends
//!
//! | store | feature | replicas |
//! |---|---|---|
//! | [`MemoryTaskStore`] | always | one process (the default) |
//! | [`RedisTaskStore`] | `redis` | every replica sharing the Redis and prefix (Lua scripts make each write atomic; keys expire with `PEXPIREAT`) |

mod memory;
mod methods;
mod record;
#[cfg(feature = "redis")]
mod redis;
mod runner;
mod settings;
mod state;

use futures_util::future::BoxFuture;
use serde_json::json;

use crate::Error;

pub use memory::MemoryTaskStore;
pub(crate) use record::now_ms;
pub use record::{Lease, TaskRecord, TaskStatus, TaskWork};
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;
pub use settings::TaskSettings;
pub(crate) use state::Tasks;

/// The JSON-RPC error code a task whose replica died ends with (`-32603`, internal error).
pub(crate) const LEASE_LAPSED_CODE: i64 = -32603;

/// How many times [`update`](trait.TaskStore.html#method.update) re-reads a record that
/// concurrent writers keep changing before it gives up.
const MAX_ATTEMPTS: usize = 64;

/// What [`TaskStore::replace`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Replaced {
    /// The record was written.
    Done,
    /// Nothing was written: the stored record is not at the version the new one follows, or
    /// it is terminal. This is what the store holds now.
    Stale(Box<TaskRecord>),
    /// There is no such task (never was, or it expired).
    Gone,
}

/// Where tasks live. See the [module docs](self) for the contract every implementation
/// keeps.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. `Ok(false)` when a task with its id exists already.
    fn create<'a>(&'a self, task: &'a TaskRecord) -> BoxFuture<'a, Result<bool, Error>>;

    /// The task `id`, or `None` when there is none (or it expired).
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, Error>>;

    /// Replaces the stored task `task.id` with `task`, atomically, when the stored one has
    /// version `task.version - 1` and is not terminal.
    fn replace<'a>(&'a self, task: &'a TaskRecord) -> BoxFuture<'a, Result<Replaced, Error>>;

    /// Up to `limit` ids of `working` tasks whose lease ended before `now_ms`.
    fn lapsed(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<Vec<String>, Error>>;

    /// The route ([`NotifyBus::route`](crate::extend::NotifyBus::route)) of the bus this
    /// store publishes task status changes on itself, in the same atomic step as the write
    /// ([`replace_announcing`](Self::replace_announcing)): one round trip where a write and
    /// a separate publication take two, and no change written but left unannounced. A server
    /// uses it only when its notifier's bus has the same route (and refuses to build
    /// otherwise). `None` by default: the server writes, then publishes on its
    /// [`Notifier`](crate::notify::Notifier).
    fn announces_on(&self) -> Option<&str> {
        None
    }

    /// [`replace`](Self::replace), and, if and only if the record is written, the
    /// publication of `event` (the JSON of a [`ChangeEvent`](crate::notify::ChangeEvent),
    /// the bus's wire form) on the bus of [`announces_on`](Self::announces_on), atomically.
    /// Called only for a store that announces; the default, for stores that do not, writes
    /// without publishing.
    fn replace_announcing<'a>(
        &'a self,
        task: &'a TaskRecord,
        event: &'a [u8],
    ) -> BoxFuture<'a, Result<Replaced, Error>> {
        let _ = event;
        self.replace(task)
    }
}

/// Encodes the bus event announcing a task's new record, for a store that publishes it in
/// its own write ([`TaskStore::replace_announcing`]), with the span the write is made in.
pub(crate) type Announce<'a> =
    &'a (dyn Fn(&TaskRecord) -> Result<(Vec<u8>, tracing::Span), Error> + Send + Sync);

/// What [`update`](trait.TaskStore.html#method.update) did.
#[derive(Debug, Clone, PartialEq)]
pub enum Updated {
    /// The change was written; this is the new record.
    Changed(TaskRecord),
    /// No change was made (the task is terminal, or the change asked for none); this is the
    /// record as it is.
    Unchanged(TaskRecord),
    /// There is no such task.
    Gone,
}

impl dyn TaskStore {
    /// Changes task `id` with `change`, atomically: reads it, lets `change` edit a copy
    /// (returning `false` to make no change), and writes it over the version it read,
    /// starting again if another writer came first. A terminal task is never passed to
    /// `change`; it is answered [`Updated::Unchanged`].
    ///
    /// # Errors
    /// The store could not answer, or the task kept changing under every attempt.
    pub async fn update(
        &self,
        id: &str,
        change: impl FnMut(&mut TaskRecord) -> bool + Send,
    ) -> Result<Updated, Error> {
        let Some(current) = self.get(id).await? else {
            return Ok(Updated::Gone);
        };
        self.update_from(current, change).await
    }

    /// [`update`](trait.TaskStore.html#method.update) starting from `current`, a record of
    /// the task read earlier (by the caller, or kept from its own last write), so that it
    /// reads nothing unless another writer came first: then the store's answer
    /// ([`Replaced::Stale`]) is the record to start again from. Atomic all the same: the
    /// write happens only over the version `change` saw.
    ///
    /// # Errors
    /// As [`update`](trait.TaskStore.html#method.update).
    pub async fn update_from(
        &self,
        current: TaskRecord,
        change: impl FnMut(&mut TaskRecord) -> bool + Send,
    ) -> Result<Updated, Error> {
        self.update_announcing(current, change, None).await
    }

    /// [`update_from`](trait.TaskStore.html#method.update_from), and when `announce` is
    /// given, each attempt's write publishes the event it encodes for the new record, in the
    /// same atomic step ([`TaskStore::replace_announcing`]) and inside the span it gives:
    /// the event of the record that was written, and nothing when nothing was.
    pub(crate) async fn update_announcing(
        &self,
        current: TaskRecord,
        mut change: impl FnMut(&mut TaskRecord) -> bool + Send,
        announce: Option<Announce<'_>>,
    ) -> Result<Updated, Error> {
        let id = current.id.clone();
        let mut current = current;
        for _ in 0..MAX_ATTEMPTS {
            if current.status.is_terminal() {
                return Ok(Updated::Unchanged(current));
            }
            let mut next = current.clone();
            if !change(&mut next) {
                return Ok(Updated::Unchanged(current));
            }
            next.version = current.version + 1;
            let replaced = match announce {
                Some(encode) => {
                    let (event, span) = encode(&next)?;
                    let write = self.replace_announcing(&next, &event);
                    tracing::Instrument::instrument(write, span).await?
                }
                None => self.replace(&next).await?,
            };
            match replaced {
                Replaced::Done => return Ok(Updated::Changed(next)),
                Replaced::Gone => return Ok(Updated::Gone),
                Replaced::Stale(stored) => current = *stored,
            }
        }
        Err(Error::unavailable(
            "task store",
            format!("task {id} kept changing during {MAX_ATTEMPTS} attempts to update it"),
        ))
    }
}

/// Turns every `working` task of `store` whose lease lapsed before `now_ms` into `failed`
/// (error `-32603`, "the replica running this task stopped"), and returns the
/// failed records. Any replica may run it at any time: a task whose lease was renewed
/// meanwhile is left alone.
///
/// # Errors
/// The store could not answer.
pub async fn fail_lapsed(store: &dyn TaskStore, now_ms: u64) -> Result<Vec<TaskRecord>, Error> {
    let mut failed = Vec::new();
    for id in store.lapsed(now_ms, 256).await? {
        let updated = store
            .update(&id, |t| {
                if !t.lease_lapsed(now_ms) {
                    return false;
                }
                lapse(t);
                true
            })
            .await?;
        if let Updated::Changed(t) = updated {
            failed.push(t);
        }
    }
    Ok(failed)
}

/// Marks `task` failed because the replica running it is gone.
pub(crate) fn lapse(task: &mut TaskRecord) {
    task.set_status(TaskStatus::Failed);
    task.status_message = Some("the replica running this task stopped".into());
    task.error = Some(json!({
        "code": LEASE_LAPSED_CODE,
        "message": "Internal error: the replica running this task stopped before it finished",
    }));
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A store that announces: the records it was asked to write with an event, and the
    /// events, over a memory store.
    #[derive(Default)]
    struct Announcing {
        inner: MemoryTaskStore,
        written: Mutex<Vec<(u64, Vec<u8>, bool)>>,
    }

    impl TaskStore for Announcing {
        fn create<'a>(&'a self, task: &'a TaskRecord) -> BoxFuture<'a, Result<bool, Error>> {
            self.inner.create(task)
        }
        fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, Error>> {
            self.inner.get(id)
        }
        fn replace<'a>(&'a self, _: &'a TaskRecord) -> BoxFuture<'a, Result<Replaced, Error>> {
            panic!("an announcing store is written with its event")
        }
        fn lapsed(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<Vec<String>, Error>> {
            self.inner.lapsed(now_ms, limit)
        }
        fn announces_on(&self) -> Option<&str> {
            Some("test")
        }
        fn replace_announcing<'a>(
            &'a self,
            task: &'a TaskRecord,
            event: &'a [u8],
        ) -> BoxFuture<'a, Result<Replaced, Error>> {
            Box::pin(async move {
                let replaced = self.inner.replace(task).await?;
                let done = replaced == Replaced::Done;
                self.written
                    .lock()
                    .unwrap()
                    .push((task.version, event.to_vec(), done));
                Ok(replaced)
            })
        }
    }

    /// Each attempt's write carries the event of the very record it writes: after a stale
    /// write, the event is encoded again for the record built over the newer version.
    #[tokio::test]
    async fn each_write_carries_the_event_of_its_own_record() {
        let store = Announcing::default();
        let task = TaskRecord::new("t", TaskWork::new("slow", json!({})), 60_000, 250);
        assert!(store.create(&task).await.unwrap());
        // Another writer comes first: the caller's record (version 1) is stale.
        let mut newer = task.clone();
        newer.version = 2;
        newer.status_message = Some("newer".into());
        assert_eq!(store.inner.replace(&newer).await.unwrap(), Replaced::Done);

        let encode = |t: &TaskRecord| {
            let event = format!(
                "{}:{}",
                t.version,
                t.status_message.as_deref().unwrap_or("")
            );
            Ok((event.into_bytes(), tracing::Span::none()))
        };
        let dyn_store: &dyn TaskStore = &store;
        let updated = dyn_store
            .update_announcing(
                task,
                |t| {
                    t.set_status(TaskStatus::Completed);
                    true
                },
                Some(&encode),
            )
            .await
            .unwrap();
        let Updated::Changed(done) = updated else {
            panic!("{updated:?}")
        };
        assert_eq!(done.version, 3);
        assert_eq!(
            *store.written.lock().unwrap(),
            vec![(2, b"2:".to_vec(), false), (3, b"3:newer".to_vec(), true)]
        );
    }
}

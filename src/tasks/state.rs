//! The task state of one replica: the shared store and settings, the handlers running
//! here (each with the token that stops it), its leases, and the upkeep every replica does
//! for all of them: publishing status changes, stopping handlers of tasks other replicas
//! ended (the bus watcher), failing tasks whose replica's lease lapsed (the sweeper), and
//! failing its own running tasks when it shuts down. [`Tasks`] is what the core holds as
//! its [`TaskFamily`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore as _;
use futures_util::future::BoxFuture;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Lease, TaskRecord, TaskSettings, TaskStatus, TaskStore, Updated, fail_lapsed, now_ms};
use crate::backends::bus::Delivery;
use crate::notify::{ChangeEvent, TaskChange};
use crate::observability::metrics;
use crate::server::Outcome;
use crate::server::Server;
use crate::server::TaskFamily;
use crate::server::WeakServer;
use crate::server::family::{TaskCall, TaskRequest};

/// The Tasks extension on one replica: the shared store, the settings, and the handlers
/// running here. Cheap to clone (an `Arc`); the background upkeep stops when the last
/// clone (the server's) is dropped.
#[derive(Clone)]
pub(crate) struct Tasks {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn TaskStore>,
    settings: TaskSettings,
    /// This replica's id in leases (random per process).
    replica: String,
    running: Mutex<HashMap<String, CancellationToken>>,
    background: std::sync::Once,
    /// Stops the background loops when the server is dropped.
    stop: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A random, unguessable id (128 bits, base64url).
pub(super) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

impl TaskFamily for Tasks {
    fn answer(&self, server: &Server, request: TaskRequest) -> Outcome {
        self.task_method(server, request)
    }

    fn call_as_task(&self, server: &Server, call: TaskCall) -> Outcome {
        Tasks::call_as_task(self, server, call)
    }

    fn stop<'a>(&'a self, server: &'a Server) -> BoxFuture<'a, usize> {
        Box::pin(self.stop_tasks(server))
    }

    fn running(&self) -> usize {
        self.lock().len()
    }
}

impl Tasks {
    /// The Tasks extension over `store`, with `settings`.
    pub(crate) fn new(store: Arc<dyn TaskStore>, settings: TaskSettings) -> Self {
        Tasks {
            inner: Arc::new(Inner {
                store,
                settings,
                replica: random_id(),
                running: Mutex::new(HashMap::new()),
                background: std::sync::Once::new(),
                stop: CancellationToken::new(),
            }),
        }
    }

    /// The shared store of tasks.
    pub(super) fn store(&self) -> &dyn TaskStore {
        &*self.inner.store
    }

    /// How tasks run.
    pub(super) fn settings(&self) -> &TaskSettings {
        &self.inner.settings
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.inner.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A fresh lease for this replica.
    pub(super) fn lease(&self) -> Lease {
        Lease {
            replica: self.inner.replica.clone(),
            until: now_ms()
                + u64::try_from(self.inner.settings.lease.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// Whether `task` runs under this replica's lease.
    pub(super) fn holds(&self, task: &TaskRecord) -> bool {
        task.status == TaskStatus::Working
            && task
                .lease
                .as_ref()
                .is_some_and(|l| l.replica == self.inner.replica)
    }

    /// Registers a handler for `id` unless `limit` handlers run already.
    pub(super) fn admit(&self, id: &str, token: &CancellationToken, limit: Option<usize>) -> bool {
        let mut running = self.lock();
        if limit.is_some_and(|max| running.len() >= max) {
            return false;
        }
        running.insert(id.to_owned(), token.clone());
        metrics::record_task_running(true);
        true
    }

    pub(super) fn release(&self, id: &str) {
        if self.lock().remove(id).is_some() {
            metrics::record_task_running(false);
        }
    }

    /// Stops the handler of `id` if it runs here.
    pub(super) fn stop_local(&self, id: &str) {
        if let Some(token) = self.lock().get(id) {
            token.cancel();
        }
    }

    /// [`stop_local`](Self::stop_local) for a change heard on the bus: when the task runs
    /// here, in a span continuing the trace of the change (`traceparent`, from the replica
    /// that made it).
    fn stop_traced(&self, id: &str, traceparent: Option<&str>) {
        let Some(token) = self.lock().get(id).cloned() else {
            return;
        };
        let span = tracing::debug_span!("mcp.task.stop", mcp.task.id = id);
        crate::observability::continue_trace(&span, traceparent);
        span.in_scope(|| token.cancel());
    }

    pub(super) fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Publishes a task's new status (listen streams, and the replica running it), after
    /// its write. [`change_announced`](Self::change_announced) is the way to change a task
    /// and announce it; this is for changes made otherwise (the lapsed-lease sweeper's).
    pub(super) async fn announce(server: &Server, task: &TaskRecord) {
        if task.status.is_terminal() {
            metrics::record_task_ended(task.status.as_str());
        }
        let event = status_event(task, crate::observability::current_traceparent());
        if let Err(e) = server.notifier().publish(event).await {
            tracing::warn!(task_id = %task.id, error = %e, "a task status change was not published");
        }
    }

    /// Changes the task `current` with `change` (as
    /// [`update_from`](trait.TaskStore.html#method.update_from) does) and has its new status
    /// announced when it changed: within the write itself when the store publishes on the
    /// server's bus ([`TaskStore::announces_on`]: one round trip, and the change is announced
    /// if and only if it was written), else by [`Written::announce`] after it, which the
    /// caller awaits once it has done what must not wait for the bus (stopping a handler
    /// here). Either way the event carries the caller's trace context and, on a shared bus,
    /// is published in an `mcp.bus.publish` span.
    ///
    /// # Errors
    /// The store could not answer (nothing was written then, nor announced by the store).
    pub(super) async fn change_announced(
        &self,
        server: &Server,
        current: TaskRecord,
        change: impl FnMut(&mut TaskRecord) -> bool + Send,
    ) -> Result<Written, crate::Error> {
        let store = self.store();
        let notifier = server.notifier();
        let by_store = store
            .announces_on()
            .is_some_and(|route| notifier.route() == Some(route));
        if !by_store {
            let updated = store.update_from(current, change).await?;
            return Ok(Written {
                pending: matches!(updated, Updated::Changed(_)),
                updated,
            });
        }
        let kind = crate::protocol::TASKS_NOTIFICATION;
        let caller = crate::observability::current_traceparent();
        let encode = move |t: &TaskRecord| {
            let span = notifier.publication_span(kind);
            let traceparent = caller
                .clone()
                .or_else(|| span.in_scope(crate::observability::current_traceparent));
            let event = serde_json::to_vec(&status_event(t, traceparent))
                .map_err(crate::Error::internal_from)?;
            Ok((event, span))
        };
        let updated = store
            .update_announcing(current, change, Some(&encode))
            .await?;
        if let Updated::Changed(t) = &updated {
            metrics::record_notification_published(kind);
            if t.status.is_terminal() {
                metrics::record_task_ended(t.status.as_str());
            }
        }
        Ok(Written {
            updated,
            pending: false,
        })
    }

    /// Starts this replica's background task work once: the lease sweeper and the watcher
    /// that stops handlers of tasks other replicas ended.
    pub(super) fn start_background(&self, server: &Server) {
        let inner = &self.inner;
        inner.background.call_once(|| {
            let weak = Arc::downgrade(&self.inner);
            let stop = inner.stop.clone();
            tokio::spawn(watch(
                weak.clone(),
                server.notifier().subscribe(),
                stop.clone(),
            ));
            let every = (inner.settings.lease / 4)
                .clamp(Duration::from_millis(100), Duration::from_secs(5));
            tokio::spawn(sweep(weak, server.downgrade(), every, stop));
        });
    }

    /// Fails every task still running on this replica (`-32603`, "the replica shut down")
    /// and stops its handler. The drain calls it (through [`Server::stop_tasks`]) once the
    /// drain delay is over, so running tasks get that long to finish; none is left
    /// `working`. Returns how many it failed.
    async fn stop_tasks(&self, server: &Server) -> usize {
        let tasks = self;
        let mut failed = 0;
        for task_id in tasks.ids() {
            let written = match tasks.inner.store.get(&task_id).await {
                Ok(Some(current)) => {
                    tasks
                        .change_announced(server, current, |t| {
                            if !tasks.holds(t) {
                                return false;
                            }
                            t.set_status(TaskStatus::Failed);
                            t.status_message = Some("the replica shut down".into());
                            t.error = Some(json!({
                                "code": super::LEASE_LAPSED_CODE,
                                "message": "Internal error: the replica running this task shut down before it finished",
                            }));
                            true
                        })
                        .await
                }
                Ok(None) => Ok(Written {
                    updated: Updated::Gone,
                    pending: false,
                }),
                Err(e) => Err(e),
            };
            tasks.stop_local(&task_id);
            match written {
                Ok(written) => {
                    if let Updated::Changed(_) = written.announce(server).await {
                        failed += 1;
                    }
                }
                Err(e) => {
                    tracing::error!(task_id, error = %e, "a task could not be failed at shutdown; its lease will lapse")
                }
            }
        }
        if failed > 0 {
            tracing::info!(failed, "failed the tasks still running at shutdown");
        }
        failed
    }
}

/// A task change written by [`Tasks::change_announced`], its announcement perhaps still to
/// be sent.
#[must_use = "a change the store did not announce is announced by `announce`"]
pub(super) struct Written {
    /// What the write did.
    pub(super) updated: Updated,
    /// Whether the change still has to be announced (the store did not do it).
    pending: bool,
}

impl Written {
    /// Whether the task was changed.
    pub(super) fn changed(&self) -> bool {
        matches!(self.updated, Updated::Changed(_))
    }

    /// Announces the change unless the store did within the write; answers what the write
    /// did.
    pub(super) async fn announce(self, server: &Server) -> Updated {
        if self.pending {
            if let Updated::Changed(t) = &self.updated {
                Tasks::announce(server, t).await;
            }
        }
        self.updated
    }
}

/// The bus event announcing `task`'s status, made in the trace of `traceparent`.
fn status_event(task: &TaskRecord, traceparent: Option<String>) -> ChangeEvent {
    let mut change = TaskChange::new(task.to_wire(), task.principal.clone());
    change.traceparent = traceparent;
    ChangeEvent::TaskStatus(change)
}

/// Stops the handlers of tasks that other replicas ended (cancelled, failed a lapsed lease),
/// as their status changes arrive on the bus. After missed events, re-reads every task
/// running here.
async fn watch(
    weak: Weak<Inner>,
    mut rx: crate::backends::bus::BusReceiver,
    stop: CancellationToken,
) {
    loop {
        let delivery = tokio::select! {
            () = stop.cancelled() => return,
            d = rx.recv() => match d { Some(d) => d, None => return },
        };
        let Some(inner) = weak.upgrade() else { return };
        let tasks = Tasks { inner };
        match delivery {
            Delivery::Event(event) => {
                if let ChangeEvent::TaskStatus(change) = &*event {
                    if change.is_terminal() {
                        tasks.stop_traced(&change.task.task_id, change.traceparent.as_deref());
                    }
                }
            }
            Delivery::Resync => {
                for id in tasks.ids() {
                    match tasks.inner.store.get(&id).await {
                        Ok(Some(t)) if !t.status.is_terminal() => {}
                        Ok(_) => tasks.stop_local(&id),
                        Err(e) => tracing::debug!(task_id = %id, error = %e, "task not re-read"),
                    }
                }
            }
        }
    }
}

/// Fails, every `every`, the tasks whose replica's lease lapsed (on any replica).
async fn sweep(weak: Weak<Inner>, server: WeakServer, every: Duration, stop: CancellationToken) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let (Some(inner), Some(server)) = (weak.upgrade(), server.upgrade()) else {
            return;
        };
        match fail_lapsed(&*inner.store, now_ms()).await {
            Ok(failed) => {
                if !failed.is_empty() {
                    metrics::record_task_lease_expiries(failed.len() as u64);
                    tracing::warn!(
                        failed = failed.len(),
                        "failed tasks whose replica's lease lapsed"
                    );
                }
                for t in &failed {
                    Tasks::announce(&server, t).await;
                }
            }
            Err(e) => tracing::debug!(error = %e, "lapsed task leases not swept"),
        }
    }
}

//! Running tools as tasks (the Tasks extension): creating a task from a `tools/call`,
//! driving its handler on this replica under a lease, settling its outcome in the
//! [`TaskStore`], resuming it after `tasks/update`, stopping it when any replica cancels it,
//! failing the tasks of replicas that died, and failing this replica's own tasks when it
//! shuts down.
//!
//! # How replicas cooperate
//!
//! - **The store is the truth.** Every status change is one atomic
//!   [`update`](trait.TaskStore.html#method.update) over the version read; terminal states
//!   are final, so when a cancel and a completion race, the first write wins and the other
//!   is a no-op.
//! - **Leases.** The replica running a handler holds a lease on its task and renews it every
//!   third of [`TaskSettings::lease`]. Every replica sweeps the store for lapsed leases (and
//!   `tasks/get` checks the one it reads); a lapsed task becomes `failed`. A task waiting for
//!   input holds no lease: no handler runs for it.
//! - **Cancel over the bus.** Each status change is published as a
//!   [`ChangeEvent::TaskStatus`]; the replica running a task that another replica turned
//!   terminal stops its handler at once. Should that event be lost (a bus reconnect), the
//!   next lease renewal finds the terminal status and stops it too.
//! - **Resume anywhere.** A handler that asks for input ends its run; the task is then
//!   `input_required` with the handler's state and the answers so far in the store. The
//!   replica whose `tasks/update` answers the last question takes the lease and runs the
//!   handler again with every answer, like a multi-round-trip retry. The replica that ran
//!   it first need not be alive.
//!
//! May import: `tasks` (the store), `runner`-level pieces of `server` (context, replies,
//! sealing of `input_required`), `handler`, `notify`, `protocol`. The `tasks/*` method
//! family calls it.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::Poll;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore as _;
use futures_util::FutureExt as _;
use http::Extensions;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio_util::sync::CancellationToken;

use super::outcome::{Outcome, Running};
use super::reply::Reply;
use super::{Inner, Server};
use crate::handler::context::ContextParts;
use crate::handler::input::Stop;
use crate::handler::{Input, Principal, RequestContext};
use crate::notify::{ChangeEvent, Delivery, TaskChange};
use crate::observability::metrics;
use crate::protocol::methods::TOOLS_CALL;
use crate::protocol::{
    CallToolResult, ClientCapabilities, CreateTaskResult, ErrorObject, RequestId, RequestMeta,
    StampResult,
};
use crate::tasks::{
    Lease, TaskRecord, TaskSettings, TaskStatus, TaskStore, TaskWork, Updated, fail_lapsed, now_ms,
};

/// A task handler's future: the tool's result, or why it stopped; a panic caught.
pub(super) type TaskFuture =
    Pin<Box<dyn Future<Output = Result<Result<CallToolResult, Stop>, ()>> + Send>>;

/// Makes a tool's handler future from its context (the same call as inline).
pub(super) type ToolCall = Box<
    dyn FnOnce(
            RequestContext,
        ) -> futures_util::future::BoxFuture<'static, Result<CallToolResult, Stop>>
        + Send,
>;

/// The task state of one replica: the shared store, the settings, and the handlers running
/// here.
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) settings: TaskSettings,
    /// This replica's id in leases (random per process).
    pub(crate) replica: String,
    running: Mutex<HashMap<String, CancellationToken>>,
    background: std::sync::Once,
    /// Stops the background loops when the server is dropped.
    stop: CancellationToken,
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A random, unguessable id (128 bits, base64url).
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The digest tasks are bound to: who the caller is (issuer, subject, client id), not the
/// token's claims. `None` for an anonymous caller.
pub(super) fn principal_digest(extensions: &Extensions) -> Option<String> {
    let p = extensions.get::<Principal>()?;
    Some(URL_SAFE_NO_PAD.encode(&Sha256::digest(p.binding().as_bytes())[..16]))
}

/// How a task's handler run ended, as the store records it.
enum End {
    Completed(Value),
    Failed(ErrorObject),
    Input {
        requests: std::collections::BTreeMap<String, Value>,
        state: Option<Value>,
    },
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, settings: TaskSettings) -> Self {
        Tasks {
            store,
            settings,
            replica: random_id(),
            running: Mutex::new(HashMap::new()),
            background: std::sync::Once::new(),
            stop: CancellationToken::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many handlers run here now.
    pub(crate) fn running(&self) -> usize {
        self.lock().len()
    }

    /// A fresh lease for this replica.
    pub(super) fn lease(&self) -> Lease {
        Lease {
            replica: self.replica.clone(),
            until: now_ms() + u64::try_from(self.settings.lease.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// Whether `task` runs under this replica's lease.
    fn holds(&self, task: &TaskRecord) -> bool {
        task.status == TaskStatus::Working
            && task
                .lease
                .as_ref()
                .is_some_and(|l| l.replica == self.replica)
    }

    /// Registers a handler for `id` unless `limit` handlers run already.
    fn admit(&self, id: &str, token: &CancellationToken, limit: Option<usize>) -> bool {
        let mut running = self.lock();
        if limit.is_some_and(|max| running.len() >= max) {
            return false;
        }
        running.insert(id.to_owned(), token.clone());
        metrics::record_task_running(true);
        true
    }

    fn release(&self, id: &str) {
        if self.lock().remove(id).is_some() {
            metrics::record_task_running(false);
        }
    }

    /// Stops the handler of `id` if it runs here.
    pub(crate) fn stop_local(&self, id: &str) {
        if let Some(token) = self.lock().get(id) {
            token.cancel();
        }
    }

    fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }
}

impl Server {
    /// Publishes a task's new status (listen streams, and the replica running it).
    pub(super) async fn announce_task(&self, task: &TaskRecord) {
        if task.status.is_terminal() {
            metrics::record_task_ended(task.status.as_str());
        }
        let change = TaskChange::new(task.to_wire(), task.principal.clone());
        if let Err(e) = self
            .inner
            .notifier
            .publish(ChangeEvent::TaskStatus(change))
            .await
        {
            tracing::warn!(task_id = %task.id, error = %e, "a task status change was not published");
        }
    }

    /// Starts this replica's background task work once: the lease sweeper and the watcher
    /// that stops handlers of tasks other replicas ended.
    pub(super) fn start_task_background(&self) {
        let inner = &self.inner;
        inner.tasks.background.call_once(|| {
            let weak = Arc::downgrade(&self.inner);
            let stop = inner.tasks.stop.clone();
            tokio::spawn(watch(
                weak.clone(),
                inner.notifier.subscribe(),
                stop.clone(),
            ));
            let every = (inner.tasks.settings.lease / 4)
                .clamp(Duration::from_millis(100), Duration::from_secs(5));
            tokio::spawn(sweep(weak, every, stop));
        });
    }

    /// Answers a `tools/call` of a task-capable tool from a client that declared the
    /// extension: polls the handler once (an [`InputRequired::before_task`](
    /// crate::InputRequired::before_task) answer is an inline `input_required` round), then
    /// stores a `working` task under this replica's lease, answers the flat
    /// `CreateTaskResult`, and drives the handler on in the background.
    pub(super) fn call_as_task(
        &self,
        id: RequestId,
        meta: RequestMeta,
        extensions: Extensions,
        retry: super::mrtr::Retry,
        work: TaskWork,
        call: ToolCall,
    ) -> Outcome {
        let server = self.clone();
        let reply = async move {
            server.start_task_background();
            if let Some(claim) = &retry.single_use {
                if let Err(reply) = server.claim(&id, TOOLS_CALL, claim).await {
                    return reply;
                }
            }
            let tasks = &server.inner.tasks;
            let caps = meta.client_capabilities.clone();
            let principal = principal_digest(&extensions);
            let token = CancellationToken::new();
            let mut work = work;
            work.responses = retry.input.responses.clone();
            let ctx = server.task_context(id.clone(), meta, extensions, retry.input, &token);
            let mut fut = guarded(call(ctx));
            let first = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
            let first = match first {
                Poll::Ready(Ok(Err(Stop::Input(ask)))) if ask.before_task => {
                    return match server.input_required(ask, &retry.binding.resolve(), &caps) {
                        Ok(result) => Reply::result(&id, &result),
                        Err(e) => server.failed(id, TOOLS_CALL, e),
                    };
                }
                Poll::Ready(outcome) => Some(outcome),
                Poll::Pending => None,
            };
            let settings = tasks.settings;
            let task_id = random_id();
            if !tasks.admit(&task_id, &token, Some(settings.max_running)) {
                metrics::record_task_rejected("max_running");
                let mut e = ErrorObject::internal_error(format!(
                    "Server busy: this replica runs its maximum of {} tasks; retry later",
                    settings.max_running
                ));
                e.data = Some(json!({"reason": "max_running"}));
                let mut reply = Reply::error(Some(id), e);
                reply.retry_after_secs = Some(5);
                return reply;
            }
            let record = TaskRecord::new(
                task_id.clone(),
                work,
                u64::try_from(settings.ttl.as_millis()).unwrap_or(u64::MAX),
                u64::try_from(settings.poll_interval.as_millis()).unwrap_or(u64::MAX),
            )
            .with_principal(principal)
            .with_lease(Some(tasks.lease()));
            match tasks.store.create(&record).await {
                Ok(true) => {}
                Ok(false) | Err(_) => {
                    tasks.release(&task_id);
                    metrics::record_task_rejected("store");
                    tracing::error!(task_id, "a task could not be stored");
                    return Reply::error(
                        Some(id),
                        ErrorObject::internal_error(
                            "Internal error: the task store is unavailable",
                        ),
                    );
                }
            }
            metrics::record_task_created();
            tracing::debug!(task_id, "task created");
            tokio::spawn(server.clone().drive(task_id, token, caps, first, fut));
            let mut result = CreateTaskResult::new(record.to_wire());
            result.meta_mut().server_info = Some(server.inner.server_info.clone());
            Reply::result(&id, &result)
        };
        Outcome::Running(Running {
            reply: Box::pin(reply),
            events: None,
        })
    }

    /// Runs `record` (just turned `working` under this replica's lease by `tasks/update`)
    /// again with every answer it has, on behalf of the request `id`.
    pub(super) fn resume_task(
        &self,
        record: &TaskRecord,
        id: RequestId,
        meta: RequestMeta,
        extensions: Extensions,
        call: ToolCall,
    ) {
        let token = CancellationToken::new();
        self.inner.tasks.admit(&record.id, &token, None);
        let caps = meta.client_capabilities.clone();
        let input = Input {
            responses: record.work.responses.clone(),
            state: record.work.state.clone(),
        };
        let ctx = self.task_context(id, meta, extensions, input, &token);
        let fut = guarded(call(ctx));
        tokio::spawn(
            self.clone()
                .drive(record.id.clone(), token, caps, None, fut),
        );
    }

    /// The context of a task's handler: no response stream (progress and logs go nowhere),
    /// cancelled only when the task is.
    fn task_context(
        &self,
        id: RequestId,
        meta: RequestMeta,
        extensions: Extensions,
        input: Input,
        token: &CancellationToken,
    ) -> RequestContext {
        RequestContext::new(ContextParts {
            id,
            method: TOOLS_CALL,
            meta,
            extensions,
            cancellation: token.clone(),
            events: None,
            input,
            notifier: self.inner.notifier.clone(),
            states: self.inner.states.clone(),
        })
    }

    /// Drives a task's handler to its end (renewing the lease meanwhile) unless the task is
    /// stopped, then records how it ended.
    async fn drive(
        self,
        task_id: String,
        token: CancellationToken,
        caps: ClientCapabilities,
        first: Option<Result<Result<CallToolResult, Stop>, ()>>,
        mut fut: TaskFuture,
    ) {
        let every = self.inner.tasks.settings.renew_every();
        let outcome = match first {
            Some(o) => Some(o),
            None => {
                let mut renew =
                    tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                loop {
                    tokio::select! {
                        o = &mut fut => break Some(o),
                        () = token.cancelled() => break None,
                        _ = renew.tick() => if !self.renew(&task_id).await { break None },
                    }
                }
            }
        };
        drop(fut);
        if let Some(outcome) = outcome {
            let end = self.end_of(&task_id, &caps, outcome);
            self.settle(&task_id, end).await;
        } else {
            tracing::debug!(task_id, "task handler stopped");
        }
        self.inner.tasks.release(&task_id);
    }

    /// Renews this replica's lease on `task_id`; `false` when the task is no longer ours to
    /// run (ended elsewhere, expired).
    async fn renew(&self, task_id: &str) -> bool {
        let tasks = &self.inner.tasks;
        let lease = tasks.lease();
        match tasks
            .store
            .update(task_id, |t| {
                if !tasks.holds(t) {
                    return false;
                }
                t.lease = Some(lease.clone());
                true
            })
            .await
        {
            Ok(Updated::Changed(_)) => true,
            Ok(Updated::Unchanged(_) | Updated::Gone) => false,
            Err(e) => {
                tracing::warn!(task_id, error = %e, "a task lease could not be renewed");
                true
            }
        }
    }

    fn end_of(
        &self,
        task_id: &str,
        caps: &ClientCapabilities,
        outcome: Result<Result<CallToolResult, Stop>, ()>,
    ) -> End {
        let internal = |why: String| {
            tracing::error!(task_id, error = %why, "task handler failed");
            End::Failed(ErrorObject::internal_error("Internal error"))
        };
        match outcome {
            Ok(Ok(result)) => match serde_json::to_value(&result) {
                Ok(v) => {
                    let size = v.to_string().len();
                    let max = self.inner.tasks.settings.max_result_bytes;
                    if size > max {
                        tracing::warn!(task_id, size, max, "a task result is too large to keep");
                        let mut e = ErrorObject::internal_error(format!(
                            "Internal error: the result ({size} bytes) exceeds the {max} bytes a task may keep"
                        ));
                        e.data = Some(json!({"reason": "result_too_large", "max": max}));
                        End::Failed(e)
                    } else {
                        End::Completed(v)
                    }
                }
                Err(e) => internal(format!("the result did not serialize: {e}")),
            },
            Ok(Err(Stop::Error(e))) => {
                if e.kind() == crate::ErrorKind::Internal {
                    tracing::error!(task_id, error = %e, "task handler failed");
                }
                End::Failed(e.to_wire())
            }
            Ok(Err(Stop::Input(ask))) => {
                if let Some(required) = ask.missing_capabilities(caps) {
                    return End::Failed(ErrorObject::missing_client_capability(&required));
                }
                let state = match ask.state {
                    Some(Ok(v)) => Some(v),
                    Some(Err(e)) => return internal(format!("its state did not serialize: {e}")),
                    None => None,
                };
                if ask.requests.is_empty() {
                    return internal("it answered input_required with no input requests".into());
                }
                let mut requests = std::collections::BTreeMap::new();
                for (key, request) in ask.requests {
                    match serde_json::to_value(&request) {
                        Ok(v) => requests.insert(key, v),
                        Err(e) => {
                            return internal(format!("an input request did not serialize: {e}"));
                        }
                    };
                }
                End::Input { requests, state }
            }
            Err(()) => internal("it panicked".into()),
        }
    }

    /// Records how a run ended, if the task is still ours (a cancel or a lapse may have
    /// ended it meanwhile; that first ending stands).
    async fn settle(&self, task_id: &str, end: End) {
        let tasks = &self.inner.tasks;
        let updated = tasks
            .store
            .update(task_id, |t| {
                if !tasks.holds(t) {
                    return false;
                }
                match &end {
                    End::Completed(result) => {
                        t.set_status(TaskStatus::Completed);
                        t.result = Some(result.clone());
                    }
                    End::Failed(error) => {
                        t.set_status(TaskStatus::Failed);
                        t.error = serde_json::to_value(error).ok();
                    }
                    End::Input { requests, state } => {
                        t.set_status(TaskStatus::InputRequired);
                        t.input_requests = requests.clone();
                        t.work.state = state.clone();
                    }
                }
                true
            })
            .await;
        match updated {
            Ok(Updated::Changed(t)) => self.announce_task(&t).await,
            Ok(_) => tracing::debug!(task_id, "the task ended elsewhere first"),
            Err(e) => {
                tracing::error!(task_id, error = %e, "a task's outcome could not be stored; its lease will lapse")
            }
        }
    }

    /// Fails every task still running on this replica (`-32603`, "the replica shut down")
    /// and stops its handler. The drain calls it once the drain delay is over, so running
    /// tasks get that long to finish; none is left `working`. Returns how many it failed.
    pub async fn stop_tasks(&self) -> usize {
        let tasks = &self.inner.tasks;
        let mut failed = 0;
        for task_id in tasks.ids() {
            let updated = tasks
                .store
                .update(&task_id, |t| {
                    if !tasks.holds(t) {
                        return false;
                    }
                    t.set_status(TaskStatus::Failed);
                    t.status_message = Some("the replica shut down".into());
                    t.error = Some(json!({
                        "code": crate::tasks::LEASE_LAPSED_CODE,
                        "message": "Internal error: the replica running this task shut down before it finished",
                    }));
                    true
                })
                .await;
            tasks.stop_local(&task_id);
            match updated {
                Ok(Updated::Changed(t)) => {
                    failed += 1;
                    self.announce_task(&t).await;
                }
                Ok(_) => {}
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

    /// How many task handlers run on this replica now.
    pub fn running_tasks(&self) -> usize {
        self.inner.tasks.running()
    }
}

/// A handler future with its panic caught.
fn guarded(
    fut: futures_util::future::BoxFuture<'static, Result<CallToolResult, Stop>>,
) -> TaskFuture {
    Box::pin(
        AssertUnwindSafe(fut)
            .catch_unwind()
            .map(|r| r.map_err(|_| ())),
    )
}

/// Stops the handlers of tasks that other replicas ended (cancelled, failed a lapsed lease),
/// as their status changes arrive on the bus. After missed events, re-reads every task
/// running here.
async fn watch(weak: Weak<Inner>, mut rx: crate::notify::BusReceiver, stop: CancellationToken) {
    loop {
        let delivery = tokio::select! {
            () = stop.cancelled() => return,
            d = rx.recv() => match d { Some(d) => d, None => return },
        };
        let Some(inner) = weak.upgrade() else { return };
        match delivery {
            Delivery::Event(event) => {
                if let ChangeEvent::TaskStatus(change) = &*event {
                    if change.is_terminal() {
                        inner.tasks.stop_local(&change.task.task_id);
                    }
                }
            }
            Delivery::Resync => {
                for id in inner.tasks.ids() {
                    match inner.tasks.store.get(&id).await {
                        Ok(Some(t)) if !t.status.is_terminal() => {}
                        Ok(_) => inner.tasks.stop_local(&id),
                        Err(e) => tracing::debug!(task_id = %id, error = %e, "task not re-read"),
                    }
                }
            }
        }
    }
}

/// Fails, every `every`, the tasks whose replica's lease lapsed (on any replica).
async fn sweep(weak: Weak<Inner>, every: Duration, stop: CancellationToken) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let Some(inner) = weak.upgrade() else { return };
        let server = Server { inner };
        match fail_lapsed(&*server.inner.tasks.store, now_ms()).await {
            Ok(failed) => {
                if !failed.is_empty() {
                    metrics::record_task_lease_expiries(failed.len() as u64);
                    tracing::warn!(
                        failed = failed.len(),
                        "failed tasks whose replica's lease lapsed"
                    );
                }
                for t in &failed {
                    server.announce_task(t).await;
                }
            }
            Err(e) => tracing::debug!(error = %e, "lapsed task leases not swept"),
        }
    }
}

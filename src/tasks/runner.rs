//! Running tools as tasks (the Tasks extension): creating a task from a `tools/call`,
//! driving its handler on this replica under a lease, settling its outcome in the
//! [`TaskStore`](super::TaskStore) and resuming it after `tasks/update`. (The replica's
//! task state and its upkeep, the bus watcher, the lease sweeper and the shutdown, are in
//! `state`.)
//!
//! # How replicas cooperate
//!
//! - **The store is the truth.** Every status change is one atomic
//!   [`update`](trait.TaskStore.html#method.update) over the version read; terminal states
//!   are final, so when a cancel and a completion race, the first write wins and the other
//!   is a no-op. The running replica writes its renewals and the outcome over the record
//!   it last wrote itself ([`update_from`](trait.TaskStore.html#method.update_from)),
//!   without reading it first: a task created and run to its end costs two store writes.
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

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;

use futures_util::FutureExt as _;
use http::Extensions;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::state::{Tasks, random_id};
use super::{TaskRecord, TaskStatus, TaskWork, Updated};
use crate::handler::context::ContextParts;
use crate::handler::input::Stop;
use crate::handler::{Input, RequestContext};
use crate::observability::metrics;
use crate::protocol::methods::TOOLS_CALL;
use crate::protocol::{
    CallToolResult, ClientCapabilities, CreateTaskResult, ErrorObject, RequestId, RequestMeta,
};
use crate::server::family::{TaskCall, ToolCall, failed, principal_digest};
use crate::server::{Outcome, Reply, Running, Server};

/// A task handler's future: the tool's result, or why it stopped; a panic caught.
type TaskFuture = Pin<Box<dyn Future<Output = Result<Result<CallToolResult, Stop>, ()>> + Send>>;

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
    /// Answers a `tools/call` of a task-capable tool from a client that declared the
    /// extension: polls the handler once (an [`InputRequired::before_task`](
    /// crate::InputRequired::before_task) answer is an inline `input_required` round), then
    /// stores a `working` task under this replica's lease, answers the flat
    /// `CreateTaskResult`, and drives the handler on in the background.
    pub(super) fn call_as_task(&self, server: &Server, call: TaskCall) -> Outcome {
        let (tasks, server) = (self.clone(), server.clone());
        let reply = async move {
            tasks.start_background(&server);
            let TaskCall {
                id,
                meta,
                extensions,
                tool,
                arguments,
                call,
                retry,
            } = call;
            if let Some(claim) = &retry.single_use {
                if let Err(reply) = server.sealer().claim(&id, TOOLS_CALL, claim).await {
                    return reply;
                }
            }
            let caps = meta.client_capabilities.clone();
            let principal = principal_digest(&extensions);
            let token = CancellationToken::new();
            let mut work = TaskWork::new(tool, arguments);
            work.responses = retry.input.responses.clone();
            let ctx = task_context(&server, id.clone(), meta, extensions, retry.input, &token);
            let mut fut = guarded(call(ctx));
            let first = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
            let first = match first {
                Poll::Ready(Ok(Err(Stop::Input(ask)))) if ask.before_task => {
                    let sealer = server.sealer();
                    return match sealer.input_required(ask, &retry.binding.resolve(), &caps) {
                        Ok(mut result) => Reply::stamped(&id, &mut result, server.stamp()),
                        Err(e) => failed(id, TOOLS_CALL, e),
                    };
                }
                Poll::Ready(outcome) => Some(outcome),
                Poll::Pending => None,
            };
            let settings = tasks.settings();
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
            match tasks.store().create(&record).await {
                Ok(true) => {}
                Ok(false) => {
                    // A random id already taken: as unlikely as a store answering wrongly.
                    tasks.release(&task_id);
                    metrics::record_task_rejected("store");
                    tracing::error!(task_id, "a task id was taken already");
                    return Reply::error(
                        Some(id),
                        ErrorObject::internal_error("Internal error: the task id was taken"),
                    );
                }
                Err(e) => {
                    tasks.release(&task_id);
                    metrics::record_task_rejected("store");
                    return Reply::store_unavailable(Some(id), "task", &e);
                }
            }
            metrics::record_task_created();
            tracing::debug!(task_id, "task created");
            let mut result = CreateTaskResult::new(record.to_wire());
            tokio::spawn(tasks.drive(server.clone(), record, token, caps, first, fut));
            Reply::stamped(&id, &mut result, server.stamp())
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
        server: &Server,
        record: &TaskRecord,
        id: RequestId,
        meta: RequestMeta,
        extensions: Extensions,
        call: ToolCall,
    ) {
        let token = CancellationToken::new();
        self.admit(&record.id, &token, None);
        let caps = meta.client_capabilities.clone();
        let input = Input {
            responses: record.work.responses.clone(),
            state: record.work.state.clone(),
        };
        let ctx = task_context(server, id, meta, extensions, input, &token);
        let fut = guarded(call(ctx));
        tokio::spawn(
            self.clone()
                .drive(server.clone(), record.clone(), token, caps, None, fut),
        );
    }

    /// Drives a task's handler to its end (renewing the lease meanwhile) unless the task is
    /// stopped, then records how it ended. `known` is the task as this replica last wrote
    /// it: each renewal and the outcome are written over it without reading the store
    /// first (a write that finds another version reads it from the store's answer).
    async fn drive(
        self,
        server: Server,
        mut known: TaskRecord,
        token: CancellationToken,
        caps: ClientCapabilities,
        first: Option<Result<Result<CallToolResult, Stop>, ()>>,
        mut fut: TaskFuture,
    ) {
        let task_id = known.id.clone();
        let every = self.settings().renew_every();
        let outcome = match first {
            Some(o) => Some(o),
            None => {
                let mut renew =
                    tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                loop {
                    tokio::select! {
                        o = &mut fut => break Some(o),
                        () = token.cancelled() => break None,
                        _ = renew.tick() => if !self.renew(&mut known).await { break None },
                    }
                }
            }
        };
        drop(fut);
        if let Some(outcome) = outcome {
            let end = self.end_of(&task_id, &caps, outcome);
            self.settle(&server, known, end).await;
        } else {
            tracing::debug!(task_id, "task handler stopped");
        }
        self.release(&task_id);
    }

    /// Renews this replica's lease on the task `known` (kept up to date); `false` when the
    /// task is no longer ours to run (ended elsewhere, expired).
    async fn renew(&self, known: &mut TaskRecord) -> bool {
        let tasks = self;
        let lease = tasks.lease();
        let task_id = known.id.clone();
        match tasks
            .store()
            .update_from(known.clone(), |t| {
                if !tasks.holds(t) {
                    return false;
                }
                t.lease = Some(lease.clone());
                true
            })
            .await
        {
            Ok(Updated::Changed(t)) => {
                *known = t;
                true
            }
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
                    let max = self.settings().max_result_bytes;
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
    /// ended it meanwhile; that first ending stands). `known` is the task as this replica
    /// last wrote it.
    async fn settle(&self, server: &Server, known: TaskRecord, end: End) {
        let tasks = self;
        let task_id = known.id.clone();
        let task_id = task_id.as_str();
        let written = tasks
            .change_announced(server, known, |t| {
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
        let updated = match written {
            Ok(written) => Ok(written.announce(server).await),
            Err(e) => Err(e),
        };
        match updated {
            Ok(Updated::Changed(_)) => {}
            Ok(_) => tracing::debug!(task_id, "the task ended elsewhere first"),
            Err(e) => {
                tracing::error!(task_id, error = %e, "a task's outcome could not be stored; its lease will lapse")
            }
        }
    }
}

/// The context of a task's handler: no response stream (progress and logs go nowhere),
/// cancelled only when the task is.
fn task_context(
    server: &Server,
    id: RequestId,
    meta: RequestMeta,
    extensions: Extensions,
    input: Input,
    token: &CancellationToken,
) -> RequestContext {
    RequestContext::new(ContextParts {
        id,
        method: TOOLS_CALL,
        meta: meta.into(),
        extensions,
        cancellation: Some(token.clone()),
        events: None,
        input,
        notifier: server.notifier().clone(),
        states: server.states().clone(),
    })
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

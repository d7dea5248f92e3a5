//! The `tasks/*` method family of the Tasks extension: `tasks/get`, `tasks/update` and
//! `tasks/cancel` (`tasks/result` and `tasks/list` were removed from the extension and are
//! answered `-32601` by the ladder).
//!
//! The core gates each on the request's own client capabilities first (`-32021` naming the
//! extension, before the task id is even read) and reads its params; here the task is found
//! in the shared store: an unknown id, an expired task and another principal's task all
//! answer `-32602` alike.

use http::Extensions;
use serde_json::json;

use super::state::Tasks;
use super::{TaskRecord, TaskStatus, Updated, lapse, now_ms};
use crate::observability::metrics;
use crate::protocol::{ErrorObject, JsonObject, RequestId, RequestMeta, TaskAck};
use crate::server::family::{TaskAsk, TaskRequest, principal_digest, tool_call_named};
use crate::server::{Outcome, Reply, Running, Server};

fn unknown_task(task_id: &str) -> ErrorObject {
    ErrorObject::invalid_params_with(
        format!("Unknown task: {task_id}"),
        json!({ "taskId": task_id }),
    )
}

fn store_unavailable(id: RequestId, task_id: &str, e: &crate::Error) -> Reply {
    tracing::debug!(task_id, "the task store did not answer");
    Reply::store_unavailable(Some(id), "task", e)
}

impl Tasks {
    /// `tasks/get`, `tasks/update` and `tasks/cancel` (gated and read by the core): the task.
    pub(super) fn task_method(&self, server: &Server, request: TaskRequest) -> Outcome {
        let TaskRequest {
            id,
            task_id,
            ask,
            meta,
            extensions,
        } = request;
        let (tasks, server) = (self.clone(), server.clone());
        let reply = async move {
            tasks.start_background(&server);
            let principal = principal_digest(&extensions);
            let found = match tasks.store().get(&task_id).await {
                Ok(Some(t)) if t.principal == principal => t,
                Ok(_) => return Reply::error(Some(id), unknown_task(&task_id)),
                Err(e) => return store_unavailable(id, &task_id, &e),
            };
            let answered = match ask {
                TaskAsk::Get => tasks.get_task(&server, found, &id).await,
                TaskAsk::Cancel => tasks.cancel_task(&server, found, &id).await,
                TaskAsk::Update(responses) => {
                    tasks
                        .update_task(&server, found, responses, &id, meta, extensions)
                        .await
                }
            };
            answered.unwrap_or_else(|e| store_unavailable(id, &task_id, &e))
        };
        Outcome::Running(Running {
            reply: Box::pin(reply),
            events: None,
        })
    }

    /// The task's detailed view; a `working` task whose lease lapsed is failed first.
    async fn get_task(
        &self,
        server: &Server,
        found: TaskRecord,
        id: &RequestId,
    ) -> Result<Reply, crate::Error> {
        let mut task = found;
        let now = now_ms();
        if task.lease_lapsed(now) {
            let updated = self
                .change_announced(server, task.clone(), |t| {
                    if !t.lease_lapsed(now) {
                        return false;
                    }
                    lapse(t);
                    true
                })
                .await?
                .announce(server)
                .await;
            match updated {
                Updated::Changed(t) => {
                    metrics::record_task_lease_expiries(1);
                    task = t;
                }
                Updated::Unchanged(t) => task = t,
                Updated::Gone => {}
            }
        }
        Ok(Reply::stamped(id, &mut task.to_detailed(), server.stamp()))
    }

    /// Cancels the task `found` (as just read) unless it ended already (the ack is the
    /// same either way).
    async fn cancel_task(
        &self,
        server: &Server,
        found: TaskRecord,
        id: &RequestId,
    ) -> Result<Reply, crate::Error> {
        let task_id = found.id.clone();
        let written = self
            .change_announced(server, found, |t| {
                t.set_status(TaskStatus::Cancelled);
                t.status_message = Some("cancelled by the client".into());
                true
            })
            .await?;
        // The handler stops here at once, without waiting for a bus publication.
        if written.changed() {
            self.stop_local(&task_id);
        }
        written.announce(server).await;
        Ok(ack(server, id))
    }

    /// Takes the answers to the pending questions of the task `found` (as just read; others
    /// are ignored); once every question is answered, this replica resumes the handler.
    async fn update_task(
        &self,
        server: &Server,
        found: TaskRecord,
        responses: JsonObject,
        id: &RequestId,
        meta: RequestMeta,
        extensions: Extensions,
    ) -> Result<Reply, crate::Error> {
        let tasks = self;
        let lease = tasks.lease();
        let updated = tasks
            .change_announced(server, found, |t| {
                if t.status != TaskStatus::InputRequired {
                    return false;
                }
                let mut answered = false;
                for (key, answer) in &responses {
                    if t.input_requests.remove(key).is_some() {
                        t.work.responses.insert(key.clone(), answer.clone());
                        answered = true;
                    }
                }
                if answered && t.input_requests.is_empty() {
                    t.set_status(TaskStatus::Working);
                    t.lease = Some(lease.clone());
                }
                answered
            })
            .await?
            // Announced before the handler resumes, so that its own (later) status changes
            // cannot be announced first.
            .announce(server)
            .await;
        if let Updated::Changed(t) = updated {
            if t.status == TaskStatus::Working {
                match tool_call_named(server, &t.work.tool, t.work.arguments.clone()) {
                    Some(call) => self.resume_task(server, &t, id.clone(), meta, extensions, call),
                    None => self.fail_unknown_tool(server, &t).await,
                }
            }
        }
        Ok(ack(server, id))
    }

    /// A resumed task whose tool this replica does not serve (a rolling deploy removed it)
    /// fails rather than wait for its lease to lapse.
    async fn fail_unknown_tool(&self, server: &Server, task: &TaskRecord) {
        let tool = task.work.tool.clone();
        let updated = self
            .change_announced(server, task.clone(), |t| {
                if t.status != TaskStatus::Working {
                    return false;
                }
                t.set_status(TaskStatus::Failed);
                t.error = serde_json::to_value(ErrorObject::invalid_params(format!(
                    "Unknown tool: {tool}"
                )))
                .ok();
                true
            })
            .await;
        match updated {
            Ok(written) => {
                written.announce(server).await;
            }
            Err(e) => {
                tracing::warn!(task_id = %task.id, error = %e, "a task whose tool is gone could not be failed; its lease will lapse");
            }
        }
    }
}

/// `{"resultType":"complete"}` (and `_meta`).
fn ack(server: &Server, id: &RequestId) -> Reply {
    Reply::stamped(id, &mut TaskAck::default(), server.stamp())
}

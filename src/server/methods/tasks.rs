//! The `tasks/*` method family of the Tasks extension: `tasks/get`, `tasks/update` and
//! `tasks/cancel` (`tasks/result` and `tasks/list` were removed from the extension and are
//! answered `-32601` by the ladder).
//!
//! Each is gated on the request's own client capabilities first (`-32021` naming the
//! extension, before the task id is even read), then finds the task in the shared store: an
//! unknown id, an expired task and another principal's task all answer `-32602` alike.
//!
//! May import: `task_runner` (resuming and stopping runs, announcing changes), `envelope`
//! (params), `outcome`/`reply`, `handler` (input parsing), `tasks`, `protocol`. Never the
//! ladder.

use http::Extensions;
use serde_json::{Value, json};

use crate::handler::input::parse_responses;
use crate::observability::metrics;
use crate::protocol::{
    ClientCapabilities, ErrorObject, JsonObject, RequestId, RequestMeta, TASKS_CANCEL,
    TASKS_EXTENSION, TASKS_GET, TaskAck,
};
use crate::server::Server;
use crate::server::envelope::{ParamsView, string_field};
use crate::server::outcome::{Outcome, Running};
use crate::server::reply::Reply;
use crate::server::task_state::principal_digest;
use crate::tasks::{TaskRecord, TaskStatus, Updated, lapse, now_ms};

/// Whether the client declared the Tasks extension on this request.
pub(in crate::server) fn declares_tasks(caps: &ClientCapabilities) -> bool {
    caps.extensions
        .as_ref()
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(|v| !v.is_null())
}

/// `-32021` naming the Tasks extension in `data.requiredCapabilities`.
pub(in crate::server) fn missing_tasks_extension() -> ErrorObject {
    let mut extensions = JsonObject::new();
    extensions.insert(TASKS_EXTENSION.into(), Value::Object(JsonObject::new()));
    let required = ClientCapabilities {
        extensions: Some(extensions),
        ..ClientCapabilities::default()
    };
    let mut e = ErrorObject::missing_client_capability(&required);
    e.message =
        format!("Missing required client capability: the {TASKS_EXTENSION} extension").into();
    e
}

fn unknown_task(task_id: &str) -> ErrorObject {
    ErrorObject::invalid_params_with(
        format!("Unknown task: {task_id}"),
        json!({ "taskId": task_id }),
    )
}

fn store_unavailable(task_id: &str, e: &crate::Error) -> ErrorObject {
    tracing::error!(task_id, error = %e, "the task store did not answer");
    ErrorObject::internal_error("Internal error: the task store is unavailable")
}

/// What one `tasks/*` request asks.
enum Ask {
    Get,
    Update(JsonObject),
    Cancel,
}

impl Server {
    /// `tasks/get`, `tasks/update` and `tasks/cancel`: the gate, the params, then the task.
    pub(in crate::server) fn task_method(
        &self,
        id: &RequestId,
        method: &str,
        meta: RequestMeta,
        view: &ParamsView<'_>,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        if !declares_tasks(&meta.client_capabilities) {
            return Err(missing_tasks_extension());
        }
        let task_id = string_field(view.task_id, "taskId")?.into_owned();
        let ask = match method {
            TASKS_GET => Ask::Get,
            TASKS_CANCEL => Ask::Cancel,
            _ => Ask::Update(parse_responses(view.input_responses)?),
        };
        let server = self.clone();
        let id = id.clone();
        let reply = async move {
            server.start_task_background();
            let principal = principal_digest(&extensions);
            let found = match server.inner.tasks.store.get(&task_id).await {
                Ok(Some(t)) if t.principal == principal => t,
                Ok(_) => return Reply::error(Some(id), unknown_task(&task_id)),
                Err(e) => return Reply::error(Some(id), store_unavailable(&task_id, &e)),
            };
            let answered = match ask {
                Ask::Get => server.get_task(found, &id).await,
                Ask::Cancel => server.cancel_task(&task_id, &id).await,
                Ask::Update(responses) => {
                    server
                        .update_task(&task_id, responses, &id, meta, extensions)
                        .await
                }
            };
            answered.unwrap_or_else(|e| Reply::error(Some(id), store_unavailable(&task_id, &e)))
        };
        Ok(Outcome::Running(Running {
            reply: Box::pin(reply),
            events: None,
        }))
    }

    /// `{"resultType":"complete"}` (and `_meta`).
    fn ack(&self, id: &RequestId) -> Reply {
        Reply::stamped(id, &mut TaskAck::default(), &self.inner.stamp)
    }

    /// The task's detailed view; a `working` task whose lease lapsed is failed first.
    async fn get_task(&self, found: TaskRecord, id: &RequestId) -> Result<Reply, crate::Error> {
        let mut task = found;
        let now = now_ms();
        if task.lease_lapsed(now) {
            let updated = self
                .inner
                .tasks
                .store
                .update(&task.id, |t| {
                    if !t.lease_lapsed(now) {
                        return false;
                    }
                    lapse(t);
                    true
                })
                .await?;
            match updated {
                Updated::Changed(t) => {
                    metrics::record_task_lease_expiries(1);
                    self.announce_task(&t).await;
                    task = t;
                }
                Updated::Unchanged(t) => task = t,
                Updated::Gone => {}
            }
        }
        Ok(Reply::stamped(
            id,
            &mut task.to_detailed(),
            &self.inner.stamp,
        ))
    }

    /// Cancels the task unless it ended already (the ack is the same either way).
    async fn cancel_task(&self, task_id: &str, id: &RequestId) -> Result<Reply, crate::Error> {
        let updated = self
            .inner
            .tasks
            .store
            .update(task_id, |t| {
                t.set_status(TaskStatus::Cancelled);
                t.status_message = Some("cancelled by the client".into());
                true
            })
            .await?;
        if let Updated::Changed(t) = updated {
            self.inner.tasks.stop_local(task_id);
            self.announce_task(&t).await;
        }
        Ok(self.ack(id))
    }

    /// Takes the answers to the task's pending questions (others are ignored); once every
    /// question is answered, this replica resumes the handler.
    async fn update_task(
        &self,
        task_id: &str,
        responses: JsonObject,
        id: &RequestId,
        meta: RequestMeta,
        extensions: Extensions,
    ) -> Result<Reply, crate::Error> {
        let tasks = &self.inner.tasks;
        let lease = tasks.lease();
        let updated = tasks
            .store
            .update(task_id, |t| {
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
            .await?;
        if let Updated::Changed(t) = updated {
            if t.status == TaskStatus::Working {
                match super::tools::tool_call_named(self, &t.work.tool, t.work.arguments.clone()) {
                    Some(call) => self.resume_task(&t, id.clone(), meta, extensions, call),
                    None => self.fail_unknown_tool(&t).await,
                }
                self.announce_task(&t).await;
            }
        }
        Ok(self.ack(id))
    }

    /// A resumed task whose tool this replica does not serve (a rolling deploy removed it)
    /// fails rather than wait for its lease to lapse.
    async fn fail_unknown_tool(&self, task: &TaskRecord) {
        let tasks = &self.inner.tasks;
        let tool = task.work.tool.clone();
        let updated = tasks
            .store
            .update(&task.id, |t| {
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
        if let Ok(Updated::Changed(t)) = updated {
            self.announce_task(&t).await;
        }
    }
}

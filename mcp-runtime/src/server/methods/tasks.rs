//! `tasks/get`, `tasks/update` and `tasks/cancel` (the tasks extension), and how a task
//! looks on the wire. Each checks, in order: `params.taskId` and its `Mcp-Name` header,
//! the extension declared on this request (`-32021`, before any lookup), then the task
//! (unknown, expired or another principal's: the same `-32602`).

use crate::mrtr::round::MAX_INPUT_RESPONSES;
use crate::protocol::envelope::ResultType;
use crate::protocol::tasks::{EXTENSION, TaskStatus, extension_required};
use crate::protocol::{RequestId, reflect};
use crate::server::parts::{Parts, TransportGuard};
use crate::server::pipeline::Job;
use crate::server::reply::{Rejection, Reply};
use crate::server::route::Prepared;
use crate::server::tasks::{current, store_rejection};
use crate::server::{Server, ServerInner};
use crate::store::{TaskChange, TaskRecord};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;

/// A task as `tasks/get`, the task handle and `notifications/tasks` show it: the task's
/// fields, then its result, error or outstanding input requests, as its status says.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskView<'a> {
    task_id: &'a str,
    status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_message: Option<&'a str>,
    created_at: String,
    last_updated_at: String,
    ttl_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    poll_interval_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_requests: Option<&'a BTreeMap<String, Value>>,
}

/// The last millisecond of year 9999: RFC 3339 has four-digit years.
const LAST_RFC3339_MS: u64 = 253_402_300_799_999;

/// An ISO 8601 timestamp (UTC, milliseconds). A record's time past year 9999 (only a
/// damaged or forged store record has one) is shown as the last millisecond of 9999.
fn iso(ms: u64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(ms.min(LAST_RFC3339_MS));
    humantime::format_rfc3339_millis(at).to_string()
}

impl<'a> TaskView<'a> {
    pub(crate) fn of(task: &'a TaskRecord) -> Self {
        let status = task.status();
        TaskView {
            task_id: task.id(),
            status,
            status_message: task.status_message(),
            created_at: iso(task.created_ms()),
            last_updated_at: iso(task.updated_ms()),
            ttl_ms: task.ttl_ms(),
            poll_interval_ms: task.poll_interval_ms(),
            result: task.result().filter(|_| status == TaskStatus::Completed),
            error: task.error().filter(|_| status == TaskStatus::Failed),
            input_requests: (status == TaskStatus::InputRequired).then(|| task.input_requests()),
        }
    }
}

/// Whether `caller` may see `task`: the caller that created it (without authorization,
/// both are `None` and the unguessable id is the only key).
fn visible(task: &TaskRecord, caller: Option<&str>) -> bool {
    task.owner() == caller
}

/// The task `task_id` of `caller`; `-32602` for one that does not exist, has expired or
/// is another caller's.
async fn callers_task(
    server: &ServerInner,
    task_id: &str,
    caller: Option<&str>,
) -> Result<TaskRecord, Rejection> {
    match current(&**crate::server::tasks::store(&server.tasks), task_id)
        .await
        .map_err(|e| store_rejection(&e))?
    {
        Some(task) if visible(&task, caller) => Ok(task),
        _ => Err(not_found(task_id)),
    }
}

/// `-32602` for a task that does not exist, has expired, or is not the caller's.
fn not_found(task_id: &str) -> Rejection {
    Rejection::params(format!("Unknown or expired task: {}", reflect(task_id)))
}

/// Reads `params.taskId` (checked against `Mcp-Name`) and requires the extension.
fn open(
    parts: &Parts,
    params: &mut Map<String, Value>,
    guard: &dyn TransportGuard,
) -> Result<String, Rejection> {
    let task_id = Parts::target(params, "taskId", guard)?;
    if !parts.meta.capabilities.has_extension(EXTENSION) {
        return Err(Rejection::failed(extension_required(&format!(
            "`{}`",
            parts.method
        ))));
    }
    Ok(task_id)
}

/// The request as a job answering with `body`'s reply.
fn job<F>(
    server: &Server,
    parts: Parts,
    body: impl FnOnce(Arc<ServerInner>, RequestId) -> F,
) -> Prepared
where
    F: Future<Output = Result<Reply, Rejection>> + Send + 'static,
{
    let id = parts.id;
    let work = body(Arc::clone(&server.inner), id.clone());
    let reply_id = id.clone();
    let fut = async move {
        match work.await {
            Ok(reply) => reply,
            Err(rejection) => Reply::rejection(Some(&reply_id), rejection),
        }
    };
    Prepared::Call(Job::new(
        id,
        CancellationToken::new(),
        parts.span,
        None,
        fut,
    ))
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
fn ack(server: &ServerInner, id: &RequestId) -> Reply {
    Reply::result(
        id,
        server.envelope(ResultType::Complete, Map::new(), None, None),
    )
}

/// `tasks/get`: the task's status, then its result, error or input requests.
pub(crate) fn get(
    server: &Server,
    parts: Parts,
    mut params: Map<String, Value>,
    guard: &dyn TransportGuard,
) -> Prepared {
    let task_id = match open(&parts, &mut params, guard) {
        Ok(t) => t,
        Err(r) => return super::reject(&parts, r),
    };
    let caller = parts.caller_key();
    job(server, parts, |server, id| async move {
        let task = callers_task(&server, &task_id, caller.as_deref()).await?;
        Ok(Reply::result(
            &id,
            server.envelope(ResultType::Complete, TaskView::of(&task), None, None),
        ))
    })
}

/// `tasks/update`: answers to the task's outstanding input requests (others ignored).
pub(crate) fn update(
    server: &Server,
    parts: Parts,
    mut params: Map<String, Value>,
    guard: &dyn TransportGuard,
) -> Prepared {
    let task_id = match open(&parts, &mut params, guard) {
        Ok(t) => t,
        Err(r) => return super::reject(&parts, r),
    };
    let responses = match params.remove("inputResponses") {
        Some(Value::Object(m)) if m.len() <= MAX_INPUT_RESPONSES => m,
        Some(Value::Object(_)) => {
            return super::reject(
                &parts,
                Rejection::params(format!(
                    "`inputResponses` has more than {MAX_INPUT_RESPONSES} entries"
                )),
            );
        }
        _ => {
            return super::reject(
                &parts,
                Rejection::params("`params.inputResponses` must be an object"),
            );
        }
    };
    let caller = parts.caller_key();
    job(server, parts, |server, id| async move {
        callers_task(&server, &task_id, caller.as_deref()).await?;
        crate::server::tasks::store(&server.tasks)
            .update(&task_id, TaskChange::Answer(responses))
            .await
            .map_err(|e| store_rejection(&e))?
            .ok_or_else(|| not_found(&task_id))?;
        Ok(ack(&server, &id))
    })
}

/// `tasks/cancel`: cancels the task (an acknowledgement also when it had ended already).
pub(crate) fn cancel(
    server: &Server,
    parts: Parts,
    mut params: Map<String, Value>,
    guard: &dyn TransportGuard,
) -> Prepared {
    let task_id = match open(&parts, &mut params, guard) {
        Ok(t) => t,
        Err(r) => return super::reject(&parts, r),
    };
    let caller = parts.caller_key();
    job(server, parts, |server, id| async move {
        callers_task(&server, &task_id, caller.as_deref()).await?;
        crate::server::tasks::store(&server.tasks)
            .update(&task_id, TaskChange::Cancel)
            .await
            .map_err(|e| store_rejection(&e))?
            .ok_or_else(|| not_found(&task_id))?;
        Ok(ack(&server, &id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_shows_what_its_status_says() {
        let mut task = TaskRecord::new("t".into(), Duration::from_secs(60), None, None);
        let v = serde_json::to_value(TaskView::of(&task)).unwrap();
        assert_eq!(v["status"], "working");
        assert_eq!(v["ttlMs"], 60_000);
        assert!(v["createdAt"].as_str().unwrap().ends_with('Z'));
        for absent in ["result", "error", "inputRequests", "pollIntervalMs"] {
            assert!(v.get(absent).is_none(), "{absent}");
        }
        task.apply(&TaskChange::Ask(
            [("k".to_owned(), json!({"method": "m"}))].into(),
        ));
        let v = serde_json::to_value(TaskView::of(&task)).unwrap();
        assert_eq!(v["inputRequests"]["k"]["method"], "m");
        task.apply(&TaskChange::Complete(json!({"content": []})));
        let v = serde_json::to_value(TaskView::of(&task)).unwrap();
        assert_eq!(v["status"], "completed");
        assert_eq!(v["result"], json!({"content": []}));
        assert!(v.get("inputRequests").is_none());
    }

    #[test]
    fn times_past_year_9999_are_shown_not_panicked_on() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(LAST_RFC3339_MS), "9999-12-31T23:59:59.999Z");
        assert_eq!(iso(LAST_RFC3339_MS + 1), "9999-12-31T23:59:59.999Z");
        assert_eq!(iso(u64::MAX), "9999-12-31T23:59:59.999Z");
    }
}

//! Tasks of a 2026-07-28 upstream (the `io.modelcontextprotocol/tasks` extension). When
//! the upstream offers the extension, its tools are served as tasks of ours when our
//! client asks for one (`TaskSupport::Optional`); the forwarded call then declares the
//! extension too, and when the upstream answers with a task of its own, ours follows it
//! to its end: `tasks/get` at the interval the upstream asks, its status message as our
//! task's, its questions to our client (answered upstream with `tasks/update`), and
//! `tasks/cancel` upstream when our call is given up. A client that does not ask for a task
//! gets the upstream's answer as it is (a task-only tool's `-32021` included).

use super::link::Link;
use super::{UpstreamError, failed};
use crate::protocol::{CallToolResult, tasks};
use crate::{Context, Error, Input};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// Polling interval when the upstream gives none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The bounds put on the upstream's `pollIntervalMs`.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(5));
/// Most questions one upstream task may ask.
const MAX_QUESTIONS: usize = 64;

/// Whether a 2026-07-28 upstream offers the tasks extension.
pub(super) fn offered(link: &Link) -> bool {
    link.is_modern()
        && link
            .capabilities()
            .get("extensions")
            .and_then(|e| e.get(tasks::EXTENSION))
            .is_some_and(Value::is_object)
}

/// Whether our client asked for a task in this request (so the upstream may be asked for
/// one too).
pub(super) fn declared(cx: &Context) -> bool {
    cx.client_capabilities().has_extension(tasks::EXTENSION)
}

/// The client capabilities that declare the extension, as every `tasks/*` request must.
fn declaring() -> Value {
    json!({ "extensions": { tasks::EXTENSION: {} } })
}

/// Sends `tasks/cancel` for the upstream task unless it ended (or was never started).
struct CancelUpstream {
    link: Arc<Link>,
    task_id: Option<String>,
}

impl Drop for CancelUpstream {
    fn drop(&mut self) {
        let Some(id) = self.task_id.take() else {
            return;
        };
        let link = Arc::clone(&self.link);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let params = json!({ "taskId": id });
                if let Err(e) = link
                    .request_with("tasks/cancel", params, Some(&declaring()))
                    .await
                {
                    tracing::warn!("could not cancel an upstream task: {e}");
                }
            });
        }
    }
}

/// Follows the upstream task `created` (its `CreateTaskResult`) to its end; the tool
/// result it completed with, or why there is none.
pub(super) async fn follow(
    link: &Arc<Link>,
    cx: &Context,
    input: Option<&Input>,
    created: Value,
) -> Result<CallToolResult, Error> {
    let Some(task_id) = created["taskId"].as_str().map(str::to_owned) else {
        return Err(Error::new(
            "the upstream server answered with a task that has no `taskId`",
        ));
    };
    let mut cancel = CancelUpstream {
        link: Arc::clone(link),
        task_id: Some(task_id.clone()),
    };
    let mut state = created;
    let mut answered = BTreeSet::new();
    let mut said: Option<String> = None;
    let mut reports = 0.0;
    loop {
        let status = state["status"].as_str().unwrap_or_default().to_owned();
        if let Some(m) = state["statusMessage"].as_str()
            && said.as_deref() != Some(m)
        {
            reports += 1.0;
            cx.progress().report(reports, None, Some(m));
            said = Some(m.to_owned());
        }
        match status.as_str() {
            "completed" => {
                cancel.task_id = None;
                return serde_json::from_value::<CallToolResult>(state["result"].clone()).map_err(
                    |e| {
                        Error::new(format!(
                            "the upstream task completed with an invalid result: {e}"
                        ))
                    },
                );
            }
            "failed" => {
                cancel.task_id = None;
                return Err(failed(rpc_error(&state["error"])));
            }
            "cancelled" => {
                cancel.task_id = None;
                return Err(Error::new("the upstream server cancelled the task"));
            }
            "input_required" => {
                let Some(input) = input else {
                    return Err(Error::new(
                        "the upstream task asked for input, which this request cannot forward",
                    ));
                };
                let asked = state["inputRequests"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                let responses = answer(input, &asked, &mut answered).await?;
                if !responses.is_empty() {
                    let params = json!({ "taskId": task_id, "inputResponses": responses });
                    link.request_with("tasks/update", params, Some(&declaring()))
                        .await
                        .map_err(failed)?;
                }
            }
            "working" => {}
            other => {
                return Err(Error::new(format!(
                    "the upstream task has an unknown status {}",
                    crate::protocol::reflect(other)
                )));
            }
        }
        let cancelled = cx.cancellation();
        tokio::select! {
            () = tokio::time::sleep(interval(&state)) => {}
            // Given up: `cancel` tells the upstream as it drops.
            () = cancelled.cancelled() => {
                return Err(Error::new("the call was cancelled"));
            }
        }
        state = link
            .request_with(
                "tasks/get",
                json!({ "taskId": task_id }),
                Some(&declaring()),
            )
            .await
            .map_err(failed)?;
    }
}

/// Asks our client the questions of `asked` not answered yet (each under
/// `upstream.task.{key}`: a task's keys are never reused); the answers by upstream key.
async fn answer(
    input: &Input,
    asked: &Map<String, Value>,
    answered: &mut BTreeSet<String>,
) -> Result<Map<String, Value>, Error> {
    let new: Vec<(&String, &Value)> = asked
        .iter()
        .filter(|(k, _)| !answered.contains(*k))
        .collect();
    if answered.len() + new.len() > MAX_QUESTIONS {
        return Err(Error::new(format!(
            "the upstream task asked more than {MAX_QUESTIONS} questions"
        )));
    }
    let keys: Vec<String> = new
        .iter()
        .map(|(k, _)| format!("upstream.task.{k}"))
        .collect();
    let answers = futures_util::future::join_all(
        new.iter()
            .zip(&keys)
            .map(|((_, q), key)| input.ask(key, (*q).clone())),
    )
    .await;
    let mut responses = Map::new();
    for ((k, _), a) in new.into_iter().zip(answers) {
        responses.insert(k.clone(), a?);
        answered.insert(k.clone());
    }
    Ok(responses)
}

/// How long to wait before the next `tasks/get`.
fn interval(state: &Value) -> Duration {
    state["pollIntervalMs"]
        .as_u64()
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1)
}

/// A failed task's `error` as the upstream's JSON-RPC error.
fn rpc_error(e: &Value) -> UpstreamError {
    UpstreamError::Rpc {
        code: e["code"]
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(-32603),
        message: e["message"]
            .as_str()
            .unwrap_or("the upstream task failed")
            .to_owned(),
        data: e.get("data").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_interval_is_the_upstreams_within_bounds() {
        assert_eq!(interval(&json!({})), DEFAULT_POLL);
        assert_eq!(
            interval(&json!({"pollIntervalMs": 250})),
            Duration::from_millis(250)
        );
        assert_eq!(interval(&json!({"pollIntervalMs": 0})), POLL_BOUNDS.0);
        assert_eq!(
            interval(&json!({"pollIntervalMs": 86_400_000})),
            POLL_BOUNDS.1
        );
        assert_eq!(interval(&json!({"pollIntervalMs": "soon"})), DEFAULT_POLL);
    }

    #[test]
    fn a_failed_tasks_error_keeps_its_code() {
        let e = rpc_error(&json!({"code": -32602, "message": "no such file", "data": {"f": 1}}));
        assert!(
            matches!(&e, UpstreamError::Rpc { code: -32602, message, data: Some(_) } if message == "no such file"),
            "{e:?}"
        );
        let e = rpc_error(&json!(null));
        assert!(
            matches!(e, UpstreamError::Rpc { code: -32603, .. }),
            "{e:?}"
        );
    }
}

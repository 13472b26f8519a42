//! Tasks of a 2026-07-28 upstream (the `io.modelcontextprotocol/tasks` extension). When
//! the upstream offers the extension, its tools are served as tasks of ours when our
//! client asks for one (`TaskSupport::Optional`); the forwarded call then declares the
//! extension too, and when the upstream answers with a task of its own, ours follows it
//! to its end: `tasks/get` at the interval the upstream asks, its status message as our
//! task's, its questions to our client (answered upstream with `tasks/update`; the upstream
//! task is still watched meanwhile, so one that ends or withdraws its question is not
//! left waiting for an answer), and `tasks/cancel` upstream when our call is given up.
//! A client that does not ask for a task gets the upstream's answer as it is (a task-only
//! tool's `-32021` included). The upstream is never asked for a task outside one of ours.

use super::link::Link;
use super::{UpstreamError, failed};
use crate::protocol::{CallToolResult, tasks};
use crate::{Context, Error, Input};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// Polling interval when the upstream gives none.
pub(super) const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The bounds put on the upstream's `pollIntervalMs`.
pub(super) const POLL_BOUNDS: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(5));
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

/// Whether the forwarded call may let the upstream answer with a task: only when this
/// call runs as a task of ours (a client that declared the extension, a tool served as a
/// task) and the upstream offers tasks. Anywhere else a task of the upstream would have
/// nothing to follow it across our rounds.
pub(super) fn wanted(cx: &Context, link: &Link) -> bool {
    cx.task_id().is_some() && offered(link)
}

/// The client capabilities that declare the extension, as every `tasks/*` request must.
fn declaring() -> Value {
    json!({ "extensions": { tasks::EXTENSION: {} } })
}

/// Attempts at one `tasks/get` or `tasks/update` when the upstream cannot be reached.
pub(super) const ATTEMPTS: u32 = 3;

/// One `tasks/*` request about the upstream's task. A failure is ours to report, not a
/// fault of our client's request: an unreachable upstream is tried again, and any other
/// failure is an execution error naming the upstream.
async fn ask_upstream(link: &Link, method: &str, params: Value) -> Result<Value, Error> {
    let mut tries = 0;
    loop {
        tries += 1;
        match link
            .request_with(method, params.clone(), Some(&declaring()))
            .await
        {
            Ok(v) => return Ok(v),
            Err(UpstreamError::Rpc { code, message, .. }) => {
                return Err(Error::new(format!(
                    "the upstream server refused `{method}` for its task ({code}: {message})"
                )));
            }
            Err(e) if tries >= ATTEMPTS => {
                return Err(Error::new(format!(
                    "the upstream server is unavailable: {e}"
                )));
            }
            Err(e) => {
                tracing::debug!("{method} of an upstream task failed, trying again: {e}");
                tokio::time::sleep(POLL_BOUNDS.0).await;
            }
        }
    }
}

/// Sends `tasks/cancel` for the upstream task as it drops, unless disarmed because the
/// task ended. Either era's upstream: a 2026-07-28 one is told the extension.
pub(crate) struct CancelUpstream {
    link: Arc<Link>,
    task_id: Option<String>,
}

impl CancelUpstream {
    pub(crate) fn new(link: &Arc<Link>, task_id: String) -> Self {
        CancelUpstream {
            link: Arc::clone(link),
            task_id: Some(task_id),
        }
    }

    /// The task ended: nothing to cancel.
    pub(crate) fn disarm(&mut self) {
        self.task_id = None;
    }
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
    let mut cancel = CancelUpstream::new(link, task_id.clone());
    if !wanted(cx, link) {
        // Not asked for (TASK-02): given up at once, as `cancel` drops.
        return Err(Error::new(
            "the upstream server answered with a task this call did not ask for",
        ));
    }
    let get = || ask_upstream(link, "tasks/get", json!({ "taskId": task_id }));
    let cancelled = cx.cancellation();
    let mut state = created;
    let mut answered = BTreeSet::new();
    let mut status_line = StatusLine::default();
    loop {
        state = told(state, get, &cancelled).await?;
        let status = state["status"].as_str().unwrap_or_default().to_owned();
        status_line.tell(cx, &state);
        if matches!(status.as_str(), "completed" | "failed" | "cancelled") {
            cancel.disarm();
        }
        match status.as_str() {
            "completed" => {
                return link.read_as::<CallToolResult>("a task's tool result", &state["result"]);
            }
            "failed" => return Err(failed(rpc_error(&state["error"]))),
            "cancelled" => {
                return Err(Error::new("the upstream server cancelled the task"));
            }
            "input_required" => {
                let Some(input) = input else {
                    return Err(Error::new(
                        "the upstream task asked for input, which this request cannot forward",
                    ));
                };
                let asked: Vec<(String, Value)> = state["inputRequests"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| !answered.contains(*k))
                    .map(|(k, q)| (k.clone(), q.clone()))
                    .collect();
                if answered.len() + asked.len() > MAX_QUESTIONS {
                    return Err(Error::new(format!(
                        "the upstream task asked more than {MAX_QUESTIONS} questions"
                    )));
                }
                if !asked.is_empty() {
                    // Our client's answers, while the upstream task is still watched: when
                    // it ends or withdraws a question, the questions are given up.
                    let keys: Vec<String> = asked
                        .iter()
                        .map(|(k, _)| format!("upstream.task.{k}"))
                        .collect();
                    let answers = futures_util::future::join_all(
                        asked
                            .iter()
                            .zip(&keys)
                            .map(|((_, q), key)| input.ask(key, q.clone())),
                    );
                    tokio::pin!(answers);
                    let answers = loop {
                        tokio::select! {
                            a = &mut answers => break Some(a),
                            () = tokio::time::sleep(interval(&state)) => {
                                let now = get().await?;
                                let still = now["status"] == "input_required"
                                    && asked.iter().all(|(k, _)| now["inputRequests"].get(k).is_some());
                                if !still {
                                    state = now;
                                    break None;
                                }
                            }
                            () = cancelled.cancelled() => {
                                return Err(Error::new("the call was cancelled"));
                            }
                        }
                    };
                    let Some(answers) = answers else {
                        continue;
                    };
                    let mut responses = Map::new();
                    for ((k, _), a) in asked.into_iter().zip(answers) {
                        responses.insert(k.clone(), a?);
                        answered.insert(k);
                    }
                    let params = json!({ "taskId": task_id, "inputResponses": responses });
                    ask_upstream(link, "tasks/update", params).await?;
                }
            }
            "working" => {}
            other => {
                // What it says is the upstream's: to the log, not to our client.
                link.tell(format_args!(
                    "its task {} has an unknown status {}",
                    crate::protocol::reflect(&task_id),
                    crate::protocol::reflect(other)
                ));
                return Err(Error::new("the upstream task has an unknown status"));
            }
        }
        tokio::select! {
            () = tokio::time::sleep(interval(&state)) => {}
            // Given up: `cancel` tells the upstream as it drops.
            () = cancelled.cancelled() => {
                return Err(Error::new("the call was cancelled"));
            }
        }
        state = get().await?;
    }
}

/// Most times a task that says it ended without saying how is read again.
const MAX_BARE_READS: u32 = 2;

/// Whether `state` says its task ended without saying how: a `CreateTaskResult` carries
/// no `result` or `error`.
fn bare(state: &Value) -> bool {
    match state["status"].as_str() {
        Some("completed") => state.get("result").is_none(),
        Some("failed") => state.get("error").is_none(),
        _ => false,
    }
}

/// `state`, or when it says its task ended without saying how ([`bare`]), the task read
/// again with `get` until it does: at most [`MAX_BARE_READS`] times, and not once
/// `cancelled` fired (an upstream that went on answering a bare end, say `completed` and
/// `failed` in turn, had this read it again at once, for ever).
async fn told<F, R>(
    mut state: Value,
    get: F,
    cancelled: &tokio_util::sync::CancellationToken,
) -> Result<Value, Error>
where
    F: Fn() -> R,
    R: Future<Output = Result<Value, Error>>,
{
    for _ in 0..MAX_BARE_READS {
        if !bare(&state) {
            return Ok(state);
        }
        if cancelled.is_cancelled() {
            return Err(Error::new("the call was cancelled"));
        }
        state = get().await?;
    }
    if bare(&state) {
        let status = state["status"].as_str().unwrap_or_default();
        return Err(Error::new(format!(
            "the upstream task is {status} but says nothing of how"
        )));
    }
    Ok(state)
}

/// How long to wait before the next `tasks/get`.
fn interval(state: &Value) -> Duration {
    poll_interval(state["pollIntervalMs"].as_u64())
}

/// The upstream's polling interval (milliseconds, if it gives one) within [`POLL_BOUNDS`].
pub(super) fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1)
}

/// An upstream task's status message, passed on as progress (which a task of ours shows
/// as its status message) each time it changes.
#[derive(Default)]
pub(super) struct StatusLine {
    said: Option<String>,
    reports: f64,
}

impl StatusLine {
    /// Tells the `statusMessage` of `state` (a task, as `tasks/get` answers it) if new.
    pub(super) fn tell(&mut self, cx: &Context, state: &Value) {
        if let Some(m) = state["statusMessage"].as_str()
            && self.said.as_deref() != Some(m)
            && cx.progress().report(self.reports + 1.0, None, Some(m))
        {
            self.reports += 1.0;
            self.said = Some(m.to_owned());
        }
    }
}

/// A failed task's `error` as the upstream's JSON-RPC error.
fn rpc_error(e: &Value) -> UpstreamError {
    super::link::rpc_error(e, "the upstream task failed")
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

    /// An upstream that answers a bare end again and again (`completed` and `failed`
    /// in turn) is read again a bounded number of times, and not once the call is
    /// cancelled. Before, it was read again at once, without end.
    #[tokio::test]
    async fn a_bare_end_is_read_again_a_bounded_number_of_times() {
        let reads = std::sync::atomic::AtomicU32::new(0);
        let get = || {
            let n = reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let status = if n.is_multiple_of(2) {
                "failed"
            } else {
                "completed"
            };
            std::future::ready(Ok(json!({"taskId": "t", "status": status})))
        };
        let never = tokio_util::sync::CancellationToken::new();
        let created = json!({"taskId": "t", "status": "completed"});
        let r = tokio::time::timeout(Duration::from_secs(5), told(created.clone(), get, &never))
            .await
            .expect("it ends");
        let e = r.unwrap_err();
        assert!(e.to_string().contains("says nothing of how"), "{e}");
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::SeqCst),
            MAX_BARE_READS
        );

        let cancelled = tokio_util::sync::CancellationToken::new();
        cancelled.cancel();
        let e = told(created, get, &cancelled).await.unwrap_err();
        assert!(e.to_string().contains("cancelled"), "{e}");
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::SeqCst),
            MAX_BARE_READS
        );

        let done = json!({"status": "completed", "result": {"content": []}});
        let got = told(
            json!({"status": "completed"}),
            || std::future::ready(Ok(done.clone())),
            &never,
        );
        assert_eq!(got.await.unwrap(), done);
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

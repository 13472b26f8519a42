//! Tasks of a 2025-11-25 upstream: its experimental task API (`capabilities.tasks` with
//! `requests.tools.call`, a tool's `execution.taskSupport`). A tool the upstream runs only
//! as a task (`required`) is run as one by the gateway whoever calls it, so that it can be
//! called through the gateway at all; an `optional` one is run as a task when our call is
//! a task of ours. The gateway reads the task's result with `tasks/result`, which brings
//! the upstream's questions (elicitation, sampling, roots) first: they reach our client as
//! those of any forwarded call do (see `parked`). Meanwhile the upstream task is watched
//! (`tasks/get` at its `pollInterval`): its status message is reported as progress (in a
//! task of ours, as our status message), and as long as it says it works its result is
//! waited for, however long that takes; gone, unreachable, or ended without its result
//! coming within the upstream's time limit (`StdioOptions::timeout`,
//! `HttpOptions::timeout`), it ends the call with an error. A call given up before the result cancels the
//! upstream task (`tasks/cancel`).

use super::failed;
use super::link::Link;
use super::parked::{self, Parked, Started};
use super::task::{ATTEMPTS, CancelUpstream, POLL_BOUNDS, StatusLine, poll_interval};
use crate::protocol::CallToolResult;
use crate::{Context, Error, Input};
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::time::Instant;

/// How a 2025-11-25 upstream runs one of its tools as a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Support {
    /// As a task when asked to, or at once.
    Optional,
    /// Only as a task.
    Required,
}

/// How the upstream runs `tool` (an entry of its `tools/list`) as a task; `None` when it
/// does not, or is a 2026-07-28 upstream (whose tasks are `task`'s).
pub(super) fn support(link: &Link, tool: &Value) -> Option<Support> {
    if link.is_modern() {
        return None;
    }
    let offered = link
        .capabilities()
        .get("tasks")
        .and_then(|t| t.pointer("/requests/tools/call"))
        .is_some_and(Value::is_object);
    match tool
        .pointer("/execution/taskSupport")
        .and_then(Value::as_str)
    {
        Some("optional") if offered => Some(Support::Optional),
        Some("required") if offered => Some(Support::Required),
        _ => None,
    }
}

/// Whether this call runs as an upstream task: always for a task-only tool; for an
/// optional one when our call is a task of ours (elsewhere the upstream answers at once).
pub(super) fn wanted(cx: &Context, support: Option<Support>) -> bool {
    match support {
        Some(Support::Required) => true,
        Some(Support::Optional) => cx.task_id().is_some(),
        None => false,
    }
}

/// The `_meta` key of the task a result came from: the upstream's, meaningless here.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Where a call's later rounds find the upstream task its first round made.
const TASK_STEP: &str = "upstream.task";

/// Runs the upstream tool `name` as an upstream task and answers its result.
pub(super) async fn forward(
    link: &Arc<Link>,
    cx: &Context,
    parked: &Parked,
    input: Option<Input>,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<CallToolResult, Error> {
    // The task: made in this call's first round, or found where that round recorded it.
    let made: OnceLock<Known> = OnceLock::new();
    if let Some(known) = input
        .as_ref()
        .and_then(|i| i.recorded_step(TASK_STEP))
        .and_then(|v| serde_json::from_value::<Known>(v).ok())
    {
        let _ = made.set(known);
    }
    let recorder = input.clone();
    let start = async {
        let params = json!({ "name": name, "arguments": arguments, "task": {} });
        let created = link.request("tools/call", params).await.map_err(failed)?;
        let task = &created["task"];
        let Some(task_id) = task["taskId"].as_str() else {
            return Err(Error::new(
                "the upstream server did not answer a task with a task",
            ));
        };
        // Cancelled upstream if what follows fails.
        let cancel = CancelUpstream::new(link, task_id.to_owned());
        let known = Known {
            task_id: task_id.to_owned(),
            poll_ms: task["pollInterval"].as_u64(),
        };
        if let Some(i) = &recorder {
            i.record_step(TASK_STEP, json!(known));
        }
        let _ = made.set(known);
        // The task says how long it takes: the wait for its result has no limit of its
        // own, and `watch` ends it when the task does not.
        let params = json!({ "taskId": task_id });
        let ongoing = link.start("tasks/result", params, None).await;
        let ongoing = ongoing.map_err(failed)?.without_time_limit();
        Ok::<Started, Error>((ongoing, Some(cancel)))
    };
    let run = parked::forward_with(link, cx, parked, input, start);
    tokio::pin!(run);
    let mut result = tokio::select! {
        r = &mut run => r,
        e = watch(link, cx, &made) => Err(e),
    }?;
    if let Some(meta) = result.meta.as_mut() {
        meta.remove(RELATED_TASK);
        if meta.is_empty() {
            result.meta = None;
        }
    }
    Ok(result)
}

/// The upstream task a call reads the result of.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Known {
    task_id: String,
    /// Its `pollInterval`, in milliseconds.
    poll_ms: Option<u64>,
}

impl Known {
    fn every(&self) -> Duration {
        poll_interval(self.poll_ms)
    }
}

/// Watches the upstream task while its result is awaited (`tasks/get` at its
/// `pollInterval`): its status message is reported as progress (which a task of ours
/// shows as its status message), and the wait ends with an error when the task is gone
/// or unreachable ([`ATTEMPTS`] polls in a row fail, as many as a modern upstream's task
/// gets) or has ended and its result does not come within the upstream's time limit
/// (its options', [`Link::patience`]). Otherwise it never ends: a working task is
/// waited for as long as the upstream says it works.
async fn watch(link: &Link, cx: &Context, made: &OnceLock<Known>) -> Error {
    let mut status_line = StatusLine::default();
    let mut failures = 0;
    let mut ended: Option<Instant> = None;
    loop {
        let Some(known) = made.get() else {
            tokio::time::sleep(POLL_BOUNDS.0).await;
            continue;
        };
        tokio::time::sleep(known.every()).await;
        let params = json!({ "taskId": known.task_id });
        let state = match link.request("tasks/get", params).await {
            Ok(s) => s,
            Err(e) => {
                failures += 1;
                if failures >= ATTEMPTS {
                    return Error::new(format!("the upstream task could not be followed: {e}"));
                }
                continue;
            }
        };
        failures = 0;
        status_line.tell(cx, &state);
        let status = state["status"].as_str().unwrap_or_default();
        if matches!(status, "completed" | "failed" | "cancelled") {
            let since = *ended.get_or_insert_with(Instant::now);
            if since.elapsed() >= link.patience() {
                return Error::new(format!(
                    "the upstream task is {status}, but its result did not come"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::task::DEFAULT_POLL;
    use super::*;

    #[test]
    fn the_poll_interval_is_the_upstreams_within_bounds() {
        let every = |poll_ms| {
            Known {
                task_id: "t".into(),
                poll_ms,
            }
            .every()
        };
        assert_eq!(every(None), DEFAULT_POLL);
        assert_eq!(every(Some(1000)), Duration::from_secs(1));
        assert_eq!(every(Some(0)), POLL_BOUNDS.0);
        assert_eq!(every(Some(86_400_000)), POLL_BOUNDS.1);
    }

    #[test]
    fn a_known_task_survives_the_sealed_state() {
        // Recorded in the first round, read back in the next.
        let known = Known {
            task_id: "abc".into(),
            poll_ms: Some(250),
        };
        let back: Known = serde_json::from_value(json!(known)).unwrap();
        assert_eq!((back.task_id.as_str(), back.poll_ms), ("abc", Some(250)));
    }
}

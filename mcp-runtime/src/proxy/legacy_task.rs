//! Tasks of a 2025-11-25 upstream: its experimental task API (`capabilities.tasks` with
//! `requests.tools.call`, a tool's `execution.taskSupport`). A tool the upstream runs only
//! as a task (`required`) is run as one by the gateway whoever calls it, so that it can be
//! called through the gateway at all; an `optional` one is run as a task when our call is
//! a task of ours. The gateway reads the task's result with `tasks/result`, which brings
//! the upstream's questions (elicitation, sampling, roots) first: they reach our client as
//! those of any forwarded call do (see `parked`). While our call is a task of ours, the
//! upstream task's status message is ours (`tasks/get` at its `pollInterval`). A call given
//! up before the result cancels the upstream task (`tasks/cancel`).

use super::failed;
use super::link::Link;
use super::parked::{self, Parked, Started};
use super::task::CancelUpstream;
use crate::protocol::CallToolResult;
use crate::{Context, Error, Input};
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

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

/// The bounds put on the upstream's `pollInterval`, and the interval when it gives none.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));
const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// Runs the upstream tool `name` as an upstream task and answers its result.
pub(super) async fn forward(
    link: &Arc<Link>,
    cx: &Context,
    parked: &Parked,
    input: Option<Input>,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<CallToolResult, Error> {
    // The task, once made (only in a call's first round: a later one finds it parked).
    let made: OnceLock<(String, Duration)> = OnceLock::new();
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
        let every = task["pollInterval"]
            .as_u64()
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
        let _ = made.set((task_id.to_owned(), every));
        let params = json!({ "taskId": task_id });
        let ongoing = link.start("tasks/result", params, None).await;
        Ok::<Started, Error>((ongoing.map_err(failed)?, Some(cancel)))
    };
    let run = parked::forward_with(link, cx, parked, input, start);
    let mut result = if cx.task_id().is_some() {
        tokio::pin!(run);
        tokio::select! {
            r = &mut run => r,
            never = watch_status(link, cx, &made) => match never {},
        }
    } else {
        run.await
    }?;
    if let Some(meta) = result.meta.as_mut() {
        meta.remove(RELATED_TASK);
        if meta.is_empty() {
            result.meta = None;
        }
    }
    Ok(result)
}

/// Makes the upstream task's status message ours as it changes (reported as progress,
/// which a task of ours shows as its status message), once the task is made; never ends.
async fn watch_status(
    link: &Link,
    cx: &Context,
    made: &OnceLock<(String, Duration)>,
) -> std::convert::Infallible {
    let mut said: Option<String> = None;
    let mut reports = 0.0;
    loop {
        let Some((task_id, every)) = made.get() else {
            tokio::time::sleep(POLL_BOUNDS.0).await;
            continue;
        };
        tokio::time::sleep(*every).await;
        let state = match link
            .request("tasks/get", json!({ "taskId": task_id }))
            .await
        {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!("tasks/get of an upstream task failed: {e}");
                continue;
            }
        };
        if let Some(m) = state["statusMessage"].as_str()
            && said.as_deref() != Some(m)
            && cx.progress().report(reports + 1.0, None, Some(m))
        {
            reports += 1.0;
            said = Some(m.to_owned());
        }
    }
}

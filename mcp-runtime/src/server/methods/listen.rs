//! `subscriptions/listen`: long-lived streams of change notifications, fed by the
//! notification bus, and of task statuses (`taskIds`, the tasks extension), fed by the
//! task store.

use super::tasks::TaskView;
use crate::protocol::envelope::{self, ResultType};
use crate::protocol::tasks::{EXTENSION, TaskStatus, extension_required};
use crate::protocol::{RequestId, keys, methods};
use crate::server::Server;
use crate::server::catalog::Catalog;
use crate::server::parts::Parts;
use crate::server::reply::{ErrorClass, Rejection, Reply};
use crate::server::route::Prepared;
use crate::server::slot::Slot;
use crate::server::tasks::current;
use crate::store::{Change, TaskRecord, TaskStore};
use futures_util::StreamExt;
use futures_util::stream::{BoxStream, SelectAll};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a listen request asked for and what the server agreed to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) uris: Vec<String>,
    /// Tasks whose status changes to send (`notifications/tasks`).
    pub(crate) task_ids: Vec<String>,
}

/// Most task ids one listen request may watch.
const MAX_TASK_IDS: usize = 256;

/// Most resources one listen request, or one legacy session, may subscribe to.
pub(crate) const MAX_RESOURCE_SUBSCRIPTIONS: usize = 256;

/// Whether a change of `uri` concerns a subscription to `subscribed`: the same URI, or
/// one below it (the subscribed URI, then `/`).
pub(crate) fn covers(subscribed: &str, uri: &str) -> bool {
    uri == subscribed
        || uri
            .strip_prefix(subscribed)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Filter {
    /// Reads `params.notifications`.
    pub(crate) fn parse(v: Option<&Value>) -> Result<Filter, &'static str> {
        let Some(obj) = v.and_then(Value::as_object) else {
            return Err("`params.notifications` must be an object");
        };
        let flag = |k: &str| match obj.get(k) {
            None | Some(Value::Bool(false)) => Ok(false),
            Some(Value::Bool(true)) => Ok(true),
            Some(_) => Err("subscription flags must be booleans"),
        };
        let uris = match obj.get("resourceSubscriptions") {
            None => Vec::new(),
            Some(Value::Array(a)) if a.len() <= MAX_RESOURCE_SUBSCRIPTIONS => a
                .iter()
                .map(|u| {
                    u.as_str()
                        .map(str::to_owned)
                        .ok_or("`resourceSubscriptions` must hold strings")
                })
                .collect::<Result<_, _>>()?,
            Some(Value::Array(_)) => {
                return Err("`resourceSubscriptions` holds too many URIs (at most 256)");
            }
            Some(_) => return Err("`resourceSubscriptions` must be an array"),
        };
        let task_ids = match obj.get("taskIds") {
            None => Vec::new(),
            Some(Value::Array(a)) if a.len() <= MAX_TASK_IDS => a
                .iter()
                .map(|u| {
                    u.as_str()
                        .map(str::to_owned)
                        .ok_or("`taskIds` must hold strings")
                })
                .collect::<Result<_, _>>()?,
            Some(Value::Array(_)) => return Err("`taskIds` holds too many ids (at most 256)"),
            Some(_) => return Err("`taskIds` must be an array"),
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
            task_ids,
        })
    }

    /// The filter as the acknowledgement echoes it.
    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        if self.tools {
            m.insert("toolsListChanged".into(), json!(true));
        }
        if self.prompts {
            m.insert("promptsListChanged".into(), json!(true));
        }
        if self.resources {
            m.insert("resourcesListChanged".into(), json!(true));
        }
        if !self.uris.is_empty() {
            m.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        if !self.task_ids.is_empty() {
            m.insert("taskIds".into(), json!(self.task_ids));
        }
        Value::Object(m)
    }

    /// The notification for `change`, if this stream asked for it.
    fn wants(&self, change: &Change) -> Option<(&'static str, Map<String, Value>)> {
        match change {
            Change::ToolsListChanged if self.tools => {
                Some(("notifications/tools/list_changed", Map::new()))
            }
            Change::PromptsListChanged if self.prompts => {
                Some(("notifications/prompts/list_changed", Map::new()))
            }
            Change::ResourcesListChanged if self.resources => {
                Some(("notifications/resources/list_changed", Map::new()))
            }
            Change::ResourceUpdated(uri) if self.uris.iter().any(|s| covers(s, uri)) => {
                let mut p = Map::new();
                p.insert("uri".into(), json!(uri));
                Some(("notifications/resources/updated", p))
            }
            _ => None,
        }
    }
}

/// What a listen stream last sent of a task: its status, update time, message and
/// outstanding input request keys.
type Sent = (TaskStatus, u64, Option<String>, Vec<String>);

/// The tasks a listen stream watches: their changes, and what was last sent for each.
pub(crate) struct TaskWatch {
    store: Arc<dyn TaskStore>,
    /// Asked for, not looked up yet (before the acknowledgement).
    asked: Vec<String>,
    changes: SelectAll<BoxStream<'static, String>>,
    /// Status, update time, message and input request keys last sent, so an unchanged
    /// task is not sent again.
    sent: HashMap<String, Sent>,
    /// Who is listening (with authorization): only their own tasks are watched.
    caller: Option<String>,
    /// How often a watched task is read again even when nothing woke it: a task whose
    /// instance died changes only when someone reads it ([`current`]).
    check: Duration,
}

impl TaskWatch {
    /// Looks up the tasks asked for; watches and returns those that exist (a task that
    /// does not, or is not the caller's, is left out of the acknowledgement).
    async fn resolve(&mut self) -> Vec<String> {
        let mut found = Vec::new();
        for id in std::mem::take(&mut self.asked) {
            if let Ok(Some(task)) = current(&*self.store, &id).await
                && task.owner() == self.caller.as_deref()
                && !found.contains(&id)
            {
                let tag = id.clone();
                let mut changes = checked(self.store.watch(&id), self.check);
                // A change between the read above and the watch woke nobody: read again
                // now that it is watched, and tell of one at once.
                let state = |t: &TaskRecord| (t.status(), t.updated_ms());
                if let Ok(Some(now)) = current(&*self.store, &id).await
                    && state(&now) != state(&task)
                {
                    changes = futures_util::stream::once(async {}).chain(changes).boxed();
                }
                self.changes
                    .push(changes.map(move |()| tag.clone()).boxed());
                found.push(id);
            }
        }
        found
    }

    /// The notification for a change of task `id`, unless nothing clients see changed.
    async fn notification(&mut self, id: &str, sub_id: &RequestId) -> Option<String> {
        let task = current(&*self.store, id).await.ok()??;
        let seen = (
            task.status(),
            task.updated_ms(),
            task.status_message().map(str::to_owned),
            // Changes within one millisecond keep `lastUpdatedAt`: a new question (or one
            // answered) may be all that differs.
            task.input_requests().keys().cloned().collect(),
        );
        if self.sent.get(id) == Some(&seen) {
            return None;
        }
        self.sent.insert(id.to_owned(), seen);
        let mut params = serde_json::to_value(TaskView::of(&task)).ok()?;
        params["_meta"] = json!({ keys::SUBSCRIPTION_ID: sub_id.to_value() });
        Some(envelope::notification(methods::NOTIFICATION_TASKS, params))
    }
}

/// `changes`, and a tick every `every` between them; ends with `changes`.
fn checked(changes: BoxStream<'static, ()>, every: Duration) -> BoxStream<'static, ()> {
    futures_util::stream::unfold(changes, move |mut changes| async move {
        tokio::select! {
            change = changes.next() => change.map(|()| ((), changes)),
            () = tokio::time::sleep(every) => Some(((), changes)),
        }
    })
    .boxed()
}

/// An accepted `subscriptions/listen` request: yields its messages in order.
pub(crate) struct Listen {
    pub(crate) id: RequestId,
    /// The acknowledgement is still to be sent.
    pub(crate) ack: bool,
    pub(crate) filter: Filter,
    pub(crate) tasks: Option<Box<TaskWatch>>,
    pub(crate) changes: BoxStream<'static, Change>,
    pub(crate) stop: CancellationToken,
    /// A transport's own stop signal (stdio: the end of input).
    pub(crate) transport_stop: Option<CancellationToken>,
    /// When the caller's token expires: the stream ends then, as when the server stops
    /// it, and the client listens again with a token that is still valid.
    pub(crate) expires: Option<tokio::time::Instant>,
    /// The graceful-close result, with the server's `_meta`.
    pub(crate) close: Option<String>,
    /// Sent instead of the result when the stream ends abruptly (the bus ended): the
    /// `notifications/cancelled` naming the listen request, where the transport asks for
    /// one (stdio).
    pub(crate) teardown: Option<String>,
    pub(crate) _live: Slot,
}

impl Listen {
    /// The listen request's id.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Also ends the stream gracefully when `token` is cancelled.
    /// An abrupt end (the server can no longer feed the stream) sends
    /// `notifications/cancelled` naming the listen request, then ends (stdio; on HTTP the
    /// stream just closes).
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn cancel_on_teardown(&mut self) {
        self.teardown = Some(envelope::notification(
            crate::protocol::methods::NOTIFICATION_CANCELLED,
            json!({
                "requestId": self.id.to_value(),
                "reason": "the server can no longer deliver this subscription",
            }),
        ));
    }

    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn stop_with(&mut self, token: CancellationToken) {
        self.transport_stop = Some(token);
    }

    /// The next message: the acknowledgement first, then the notifications this stream
    /// asked for; when the server stops it, the listen result; then `None`.
    pub(crate) async fn next(&mut self) -> Option<String> {
        if self.ack {
            self.ack = false;
            if let Some(tasks) = &mut self.tasks {
                self.filter.task_ids = tasks.resolve().await;
            }
            let ack = envelope::notification(
                "notifications/subscriptions/acknowledged",
                json!({
                    "notifications": self.filter.to_json(),
                    "_meta": { keys::SUBSCRIPTION_ID: self.id.to_value() },
                }),
            );
            return Some(ack);
        }
        self.close.as_ref()?;
        loop {
            let transport_stop = async {
                match &self.transport_stop {
                    Some(t) => t.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            let expired = async {
                match self.expires {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let task_change = async {
                match &mut self.tasks {
                    Some(t) if !t.changes.is_empty() => t.changes.next().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return self.close.take(),
                () = transport_stop => return self.close.take(),
                () = expired => {
                    tracing::debug!("the caller's token expired; closing a subscription");
                    return self.close.take();
                }
                Some(task_id) = task_change => {
                    if let Some(tasks) = &mut self.tasks
                        && let Some(n) = tasks.notification(&task_id, &self.id).await
                    {
                        return Some(n);
                    }
                }
                change = self.changes.next() => match change {
                    None => {
                        tracing::warn!("the notification bus ended; closing a subscription");
                        self.close = None;
                        return self.teardown.take();
                    }
                    Some(c) => {
                        if let Some((method, mut params)) = self.filter.wants(&c) {
                            params.insert("_meta".into(), json!({ keys::SUBSCRIPTION_ID: self.id.to_value() }));
                            return Some(envelope::notification(method, params));
                        }
                    }
                },
            }
        }
    }
}

/// `subscriptions/listen`: agrees to the subset of the filter this server can honour
/// (list changes of kinds it has, updates of URIs that resolve now). Past the cap on open
/// streams, the request is refused (the transport says busy).
pub(crate) fn open(
    server: &Server,
    parts: Parts,
    params: Map<String, Value>,
    catalog: &Catalog,
) -> Prepared {
    let caller = parts.caller_key();
    let id = parts.id.clone();
    let expires = parts
        .principal
        .as_deref()
        .and_then(crate::auth::Principal::stream_deadline);
    let asked = match Filter::parse(params.get("notifications")) {
        Ok(f) => f,
        Err(e) => return Prepared::Reply(Reply::rejection(Some(&id), Rejection::params(e))),
    };
    // A server serving tasks (also once its tools running as tasks are gone: their tasks
    // remain) requires the extension for `taskIds`; one that does not ignores the field,
    // as any filter it cannot honour.
    let engine = catalog
        .task_engine
        .or_else(|| server.inner.task_engine.get().copied());
    let serves_tasks = engine.is_some();
    if serves_tasks
        && !asked.task_ids.is_empty()
        && !parts.meta.capabilities.has_extension(EXTENSION)
    {
        return Prepared::Reply(Reply::rejection(
            Some(&id),
            Rejection::failed(extension_required("`subscriptions/listen` with `taskIds`")),
        ));
    }
    let tasks = engine.filter(|_| !asked.task_ids.is_empty()).map(|e| {
        Box::new(TaskWatch {
            store: Arc::clone((e.store)(&server.inner.tasks)),
            asked: asked.task_ids.clone(),
            changes: SelectAll::new(),
            sent: HashMap::new(),
            caller,
            check: server.inner.tasks.lease,
        })
    });
    let filter = Filter {
        tools: asked.tools && catalog.has_tools(),
        prompts: asked.prompts && catalog.has_prompts(),
        resources: asked.resources && catalog.has_resources(),
        uris: {
            let mut seen = std::collections::HashSet::new();
            asked
                .uris
                .into_iter()
                // Each once, what resolves now, and what the caller may read; of a proxied
                // upstream's, only what it lists (those `follow` watches): one its template
                // merely matches would never be told of.
                .filter(|u| seen.insert(u.clone()))
                .filter(|u| {
                    catalog.find_resource(u).is_some_and(|(r, _)| {
                        let unwatched = r.def.item.foreign && !catalog.statics.contains_key(u);
                        !unwatched
                            && crate::server::authz::permit(
                                &server.inner.settings,
                                &parts,
                                &r.def.item,
                            )
                            .is_ok()
                    })
                })
                .collect()
        },
        task_ids: Vec::new(),
    };
    let inner = &server.inner;
    let Some(live) = Slot::acquire(&inner.live, inner.limits.max_subscriptions) else {
        crate::telemetry::cap_reached("too many open subscriptions");
        return Prepared::Reply(Reply::rejection(
            Some(&id),
            Rejection::new(
                ErrorClass::Busy,
                crate::protocol::RpcError::internal("Too many open subscriptions; try again later"),
            ),
        ));
    };
    let mut sub_meta = Map::new();
    sub_meta.insert(keys::SUBSCRIPTION_ID.into(), id.to_value());
    let close = Reply::result(
        &id,
        inner.envelope(ResultType::Complete, Map::new(), None, Some(&sub_meta)),
    )
    .body;
    tracing::debug!("subscription opened");
    Prepared::Listen(Listen {
        id,
        ack: true,
        filter,
        tasks,
        changes: inner.changes(),
        stop: inner.shutdown.child_token(),
        transport_stop: None,
        expires,
        close: Some(close),
        teardown: None,
        _live: live,
    })
}

#[cfg(test)]
mod tests;

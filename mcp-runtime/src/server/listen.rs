//! `subscriptions/listen`: long-lived streams of change notifications, fed by a
//! notification bus.

use crate::protocol::{RequestId, keys};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// A change to what a server serves, announced on listen streams that asked for it.
///
/// ```
/// use mcp_runtime::{Change, Context, Server, tool, tools};
///
/// /// Reloads the notes and tells listeners what changed.
/// #[tool]
/// async fn reload(cx: Context) -> &'static str {
///     if let Some(server) = cx.server() {
///         server.notify(Change::ResourceUpdated("notes://index".into()));
///         server.notify(Change::ResourcesListChanged);
///     }
///     "reloaded"
/// }
///
/// let server = Server::builder("notes", "1.0").tools(tools![reload]).build().unwrap();
/// server.notify(Change::ToolsListChanged); // no listener yet: nobody is told
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The set of tools changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The set of prompts changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The set of resources changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// The contents of a resource changed (`notifications/resources/updated`).
    ResourceUpdated(String),
}

/// Carries [`Change`]s from where they happen to every listen stream.
///
/// The default, [`LocalBus`], works within one process. A deployment with several
/// instances behind a balancer plugs in a shared backend (Redis pub/sub, Postgres
/// `NOTIFY`, ...) by implementing this trait, so a change made on one instance reaches
/// listeners on all of them. Delivery is best effort, as the spec allows: a subscriber that
/// falls behind loses changes rather than making the server buffer without bound.
///
/// ```
/// use futures_util::stream::BoxStream;
/// use mcp_runtime::{Change, LocalBus, NotificationBus, Server};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// /// Counts what it carries; a real bus would forward to Redis, NATS, ...
/// struct Counted(LocalBus, Arc<AtomicUsize>);
///
/// impl NotificationBus for Counted {
///     fn publish(&self, change: Change) {
///         self.1.fetch_add(1, Ordering::Relaxed);
///         self.0.publish(change);
///     }
///     fn subscribe(&self) -> BoxStream<'static, Change> {
///         self.0.subscribe()
///     }
/// }
///
/// let count = Arc::new(AtomicUsize::new(0));
/// let bus = Counted(LocalBus::default(), Arc::clone(&count));
/// let server = Server::builder("x", "1.0").notification_bus(bus).build().unwrap();
/// server.notify_resource_updated("notes://1");
/// assert_eq!(count.load(Ordering::Relaxed), 1);
/// ```
pub trait NotificationBus: Send + Sync + 'static {
    /// Announces a change.
    fn publish(&self, change: Change);
    /// The changes announced from now on.
    fn subscribe(&self) -> BoxStream<'static, Change>;
}

/// An in-process [`NotificationBus`] (a broadcast channel of bounded capacity: a listener
/// more than `capacity` changes behind skips the ones it missed).
///
/// ```
/// use futures_util::StreamExt;
/// use mcp_runtime::{Change, LocalBus, NotificationBus, Server};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let bus = LocalBus::new(16);
/// let mut changes = bus.subscribe();
/// bus.publish(Change::ResourceUpdated("notes://1".into()));
/// assert_eq!(changes.next().await, Some(Change::ResourceUpdated("notes://1".into())));
/// # });
///
/// // Servers use one by default; a bigger buffer for bursts of changes:
/// let server = Server::builder("x", "1.0").notification_bus(LocalBus::new(1024)).build().unwrap();
/// # drop(server);
/// ```
pub struct LocalBus(broadcast::Sender<Change>);

impl LocalBus {
    /// A bus keeping at most `capacity` undelivered changes per listener.
    pub fn new(capacity: usize) -> Self {
        LocalBus(broadcast::channel(capacity.max(1)).0)
    }
}

impl Default for LocalBus {
    fn default() -> Self {
        Self::new(256)
    }
}

impl NotificationBus for LocalBus {
    fn publish(&self, change: Change) {
        // No listener is not an error.
        let _ = self.0.send(change);
    }

    fn subscribe(&self) -> BoxStream<'static, Change> {
        futures_util::stream::unfold(self.0.subscribe(), |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(c) => return Some((c, rx)),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(skipped = n, "a slow listen stream missed changes");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }
}

/// What a listen request asked for and what the server agreed to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) uris: Vec<String>,
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
            Some(Value::Array(a)) => a
                .iter()
                .map(|u| {
                    u.as_str()
                        .map(str::to_owned)
                        .ok_or("`resourceSubscriptions` must hold strings")
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("`resourceSubscriptions` must be an array"),
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
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
            Change::ResourceUpdated(uri)
                if self.uris.iter().any(|s| {
                    uri == s
                        || uri
                            .strip_prefix(s.as_str())
                            .is_some_and(|r| r.starts_with('/'))
                }) =>
            {
                let mut p = Map::new();
                p.insert("uri".into(), json!(uri));
                Some(("notifications/resources/updated", p))
            }
            _ => None,
        }
    }
}

/// Counts live subscriptions; the count drops when the stream is dropped.
pub(crate) struct LiveGuard(Arc<AtomicUsize>);

impl LiveGuard {
    /// Takes a slot, unless `max` are taken already.
    pub(crate) fn acquire(count: &Arc<AtomicUsize>, max: usize) -> Option<LiveGuard> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| LiveGuard(Arc::clone(count)))
    }
}

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An accepted `subscriptions/listen` request: yields its messages in order.
pub(crate) struct Listen {
    pub(crate) id: RequestId,
    pub(crate) ack: Option<String>,
    pub(crate) filter: Filter,
    pub(crate) changes: BoxStream<'static, Change>,
    pub(crate) stop: CancellationToken,
    /// A transport's own stop signal (stdio: the end of input).
    pub(crate) transport_stop: Option<CancellationToken>,
    /// The graceful-close result, with the server's `_meta`.
    pub(crate) close: Option<String>,
    pub(crate) _live: LiveGuard,
}

impl Listen {
    /// The listen request's id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Also ends the stream gracefully when `token` is cancelled.
    pub(crate) fn stop_with(&mut self, token: CancellationToken) {
        self.transport_stop = Some(token);
    }

    /// The next message: the acknowledgement first, then the notifications this stream
    /// asked for; when the server stops it, the listen result; then `None`.
    pub(crate) async fn next(&mut self) -> Option<String> {
        if let Some(ack) = self.ack.take() {
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
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return self.close.take(),
                () = transport_stop => return self.close.take(),
                change = self.changes.next() => match change {
                    None => return self.close.take(),
                    Some(c) => {
                        if let Some((method, mut params)) = self.filter.wants(&c) {
                            params.insert("_meta".into(), json!({ keys::SUBSCRIPTION_ID: self.id.to_value() }));
                            return Some(json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string());
                        }
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters() {
        let f = Filter::parse(Some(&json!({"toolsListChanged": true, "resourceSubscriptions": ["a://x"], "taskIds": ["t"]}))).unwrap();
        assert!(f.tools && !f.prompts);
        assert!(f.wants(&Change::ToolsListChanged).is_some());
        assert!(f.wants(&Change::PromptsListChanged).is_none());
        assert!(f.wants(&Change::ResourceUpdated("a://x".into())).is_some());
        assert!(
            f.wants(&Change::ResourceUpdated("a://x/part".into()))
                .is_some()
        );
        assert!(f.wants(&Change::ResourceUpdated("a://xy".into())).is_none());
        assert!(Filter::parse(None).is_err());
        assert!(Filter::parse(Some(&json!({"toolsListChanged": "yes"}))).is_err());
    }

    #[test]
    fn the_live_count_is_bounded_and_released() {
        let count = Arc::new(AtomicUsize::new(0));
        let a = LiveGuard::acquire(&count, 2).unwrap();
        let _b = LiveGuard::acquire(&count, 2).unwrap();
        assert!(LiveGuard::acquire(&count, 2).is_none());
        drop(a);
        assert_eq!(count.load(Ordering::Acquire), 1);
        assert!(LiveGuard::acquire(&count, 2).is_some());
    }
}

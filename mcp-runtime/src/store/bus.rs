//! The notification bus: how a change made anywhere reaches every listen stream.

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use tokio::sync::broadcast;

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
/// use mcp_runtime::{Change, Server};
/// use mcp_runtime::store::{LocalBus, NotificationBus};
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
/// use mcp_runtime::{Change, Server};
/// use mcp_runtime::store::{LocalBus, NotificationBus};
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

//! The notification bus: how a change made anywhere reaches every listen stream, and how a
//! change to the catalog made on one instance reaches every instance.

use super::StoreError;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
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
///
/// On a shared bus a change travels as one line of JSON (see [`Change::to_json`]):
///
/// ```
/// use mcp_runtime::Change;
///
/// let c = Change::ResourceUpdated("notes://1".into());
/// assert_eq!(c.to_json(), r#"{"type":"resourceUpdated","uri":"notes://1"}"#);
/// assert_eq!(Change::from_json(&c.to_json()).unwrap(), c);
/// assert_eq!(Change::ToolsListChanged.to_json(), r#"{"type":"toolsListChanged"}"#);
/// assert!(Change::from_json(r#"{"type":"somethingElse"}"#).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "Wire", from = "Wire")]
pub enum Change {
    /// The set of tools changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The set of prompts changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The set of resources changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// The contents of a resource changed (`notifications/resources/updated`).
    ResourceUpdated(String),
    /// An item was added to or removed from the catalog at runtime on one instance. Every
    /// instance sharing the bus applies it (from its standby items, see
    /// [`ServerBuilder::standby_tools`](crate::ServerBuilder::standby_tools)), then tells
    /// its own listeners that the list changed. Listen streams never see this variant.
    Catalog(CatalogChange),
}

/// A runtime change to the catalog, as instances tell each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogChange {
    /// Which list.
    pub kind: ItemKind,
    /// The tool or prompt name, or the resource URI (or URI template).
    pub name: String,
    /// Added (or replaced) or removed.
    pub op: CatalogOp,
    /// The instance that made the change (it has applied it already).
    pub origin: String,
    /// When it was made: milliseconds since the Unix epoch, strictly increasing in one
    /// process ([`CatalogChange::new`] stamps it). Of two changes to one item, the later
    /// (by this stamp, then by origin) wins wherever they meet, whatever order they
    /// arrive in ([`CatalogChange::supersedes`]), so a change that reaches the bus late
    /// (retried while the bus was away) does not undo a newer one. 0 in records written
    /// before it was carried: older than any.
    #[serde(default)]
    pub at: u64,
}

/// The lists of a catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ItemKind {
    /// `tools/list`.
    Tool,
    /// `prompts/list`.
    Prompt,
    /// `resources/list` and `resources/templates/list`.
    Resource,
}

/// What happened to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CatalogOp {
    /// Added, or replaced.
    Added,
    /// Removed.
    Removed,
}

impl CatalogChange {
    /// A change made now on instance `origin`, stamped with [`CatalogChange::at`].
    ///
    /// ```
    /// use mcp_runtime::store::{CatalogChange, CatalogOp, ItemKind};
    ///
    /// let on = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "a");
    /// let off = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Removed, "a");
    /// assert!(off.at > on.at, "strictly increasing, even within one millisecond");
    /// assert!(!on.supersedes(&off), "the earlier one, arriving late, loses");
    /// assert!(off.supersedes(&on));
    /// ```
    pub fn new(
        kind: ItemKind,
        name: impl Into<String>,
        op: CatalogOp,
        origin: impl Into<String>,
    ) -> CatalogChange {
        CatalogChange {
            kind,
            name: name.into(),
            op,
            origin: origin.into(),
            at: stamp(),
        }
    }

    /// Whether this change is to be applied over `other`, a change to the same item:
    /// unless `other` comes later in [`CatalogChange::order`]. The same change met twice
    /// (or two records without a stamp from one instance) applies in the order they
    /// arrive. The Redis bus's record script applies the same rule
    /// (`store/redis/mod.rs`).
    ///
    /// ```
    /// use mcp_runtime::store::{CatalogChange, CatalogOp, ItemKind};
    ///
    /// let at = |origin: &str, at| CatalogChange {
    ///     at,
    ///     ..CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, origin)
    /// };
    /// assert!(at("a", 2).supersedes(&at("b", 1)));
    /// // Made in the same millisecond on two instances: the origin decides, everywhere.
    /// assert!(at("b", 2).supersedes(&at("a", 2)));
    /// assert!(!at("a", 2).supersedes(&at("b", 2)));
    /// // A record replayed after a reconnect is the same change.
    /// assert!(at("replayed:a", 2).supersedes(&at("a", 2)));
    /// ```
    pub fn supersedes(&self, other: &CatalogChange) -> bool {
        self.order() >= other.order()
    }

    /// Where the change stands among the changes to its item: its stamp, then the
    /// instance that made it (without the `replayed:` mark a record replayed after a
    /// reconnect carries), so that changes stamped alike on two instances are ordered
    /// alike everywhere.
    pub fn order(&self) -> (u64, &str) {
        (self.at, unmarked(&self.origin))
    }

    /// The list change listeners are told of.
    pub fn list_change(&self) -> Change {
        match self.kind {
            ItemKind::Tool => Change::ToolsListChanged,
            ItemKind::Prompt => Change::PromptsListChanged,
            ItemKind::Resource => Change::ResourcesListChanged,
        }
    }
}

/// The instance named by a change's `origin`, without the mark of a replayed record.
pub(crate) fn unmarked(origin: &str) -> &str {
    let mut origin = origin;
    while let Some(rest) = origin.strip_prefix(REPLAYED) {
        origin = rest;
    }
    origin
}

/// How the origin of a record replayed after a reconnect begins.
pub(crate) const REPLAYED: &str = "replayed:";

/// Milliseconds since the Unix epoch, strictly increasing in this process (the next one
/// after the last when the clock has not moved on, or moved back).
fn stamp() -> u64 {
    stamp_after(0)
}

/// [`stamp`], and no earlier than `floor`.
pub(crate) fn stamp_after(floor: u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(floor).max(last.saturating_add(1));
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

/// The wire form of a [`Change`]: an object tagged by `type`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum Wire {
    ToolsListChanged,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated { uri: String },
    Catalog(CatalogChange),
}

impl From<Change> for Wire {
    fn from(c: Change) -> Wire {
        match c {
            Change::ToolsListChanged => Wire::ToolsListChanged,
            Change::PromptsListChanged => Wire::PromptsListChanged,
            Change::ResourcesListChanged => Wire::ResourcesListChanged,
            Change::ResourceUpdated(uri) => Wire::ResourceUpdated { uri },
            Change::Catalog(c) => Wire::Catalog(c),
        }
    }
}

impl From<Wire> for Change {
    fn from(w: Wire) -> Change {
        match w {
            Wire::ToolsListChanged => Change::ToolsListChanged,
            Wire::PromptsListChanged => Change::PromptsListChanged,
            Wire::ResourcesListChanged => Change::ResourcesListChanged,
            Wire::ResourceUpdated { uri } => Change::ResourceUpdated(uri),
            Wire::Catalog(c) => Change::Catalog(c),
        }
    }
}

impl Change {
    /// The change as one line of JSON (what shared buses carry).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    /// Reads a change carried by a shared bus.
    pub fn from_json(text: &str) -> Result<Change, String> {
        serde_json::from_str(text).map_err(|e| format!("not a change: {e}"))
    }
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
///
/// A server with a bus of its own (anything set with
/// [`ServerBuilder::notification_bus`](crate::ServerBuilder::notification_bus)) treats it
/// as shared: it publishes every change to it and delivers to its listeners what it reads
/// back, so a change reaches each listener once, whichever instance made it.
pub trait NotificationBus: Send + Sync + 'static {
    /// Announces a change.
    fn publish(&self, change: Change);
    /// The changes announced from now on.
    fn subscribe(&self) -> BoxStream<'static, Change>;
    /// The catalog changes made so far by the instances sharing the bus (the latest per
    /// item), so an instance that starts late catches up. None by default.
    fn catalog(&self) -> BoxFuture<'_, Result<Vec<CatalogChange>, StoreError>> {
        async { Ok(Vec::new()) }.boxed()
    }
}

impl<B: NotificationBus + ?Sized> NotificationBus for std::sync::Arc<B> {
    fn publish(&self, change: Change) {
        (**self).publish(change)
    }
    fn subscribe(&self) -> BoxStream<'static, Change> {
        (**self).subscribe()
    }
    fn catalog(&self) -> BoxFuture<'_, Result<Vec<CatalogChange>, StoreError>> {
        (**self).catalog()
    }
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
pub struct LocalBus {
    capacity: usize,
    /// Made for the first listener: until then a change reaches no one (as a channel
    /// without receivers drops it), and a server nobody listens to does not hold, written
    /// out, the `capacity` slots the channel allocates.
    tx: OnceLock<broadcast::Sender<Change>>,
}

impl LocalBus {
    /// A bus keeping at most `capacity` undelivered changes per listener.
    pub fn new(capacity: usize) -> Self {
        // Refused here, as the channel refuses it, not at the first listener.
        assert!(
            capacity <= usize::MAX >> 1,
            "broadcast channel capacity exceeded `usize::MAX / 2`"
        );
        LocalBus {
            capacity: capacity.max(1),
            tx: OnceLock::new(),
        }
    }
}

impl Default for LocalBus {
    fn default() -> Self {
        Self::new(256)
    }
}

impl NotificationBus for LocalBus {
    fn publish(&self, change: Change) {
        // No listener (or none yet) is not an error.
        if let Some(tx) = self.tx.get() {
            let _ = tx.send(change);
        }
    }

    fn subscribe(&self) -> BoxStream<'static, Change> {
        let tx = self.tx.get_or_init(|| broadcast::channel(self.capacity).0);
        changes_of(tx.subscribe(), "a slow listen stream missed changes")
    }
}

/// The changes a broadcast receiver gets, as a stream; a receiver that falls behind skips
/// what it missed, with `lagged` as the warning.
pub(crate) fn changes_of(
    rx: broadcast::Receiver<Change>,
    lagged: &'static str,
) -> BoxStream<'static, Change> {
    futures_util::stream::unfold(rx, move |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(c) => return Some((c, rx)),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(skipped = n, "{lagged}");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn updated(n: u32) -> Change {
        Change::ResourceUpdated(format!("notes://{n}"))
    }

    #[tokio::test]
    async fn a_local_bus_makes_its_channel_for_the_first_listener() {
        let bus = LocalBus::new(2);
        // Before any listener: no channel, and the change reaches no one.
        bus.publish(updated(0));
        assert!(bus.tx.get().is_none());
        let mut a = bus.subscribe();
        let mut b = bus.subscribe();
        // Still its capacity: a listener three changes behind skips the oldest.
        for n in 1..=3 {
            bus.publish(updated(n));
        }
        for listener in [&mut a, &mut b] {
            assert_eq!(listener.next().await, Some(updated(2)));
            assert_eq!(listener.next().await, Some(updated(3)));
        }
        drop((a, b));
        // With no listener left a change is dropped; a later listener gets what follows.
        bus.publish(updated(4));
        let mut c = bus.subscribe();
        bus.publish(updated(5));
        assert_eq!(c.next().await, Some(updated(5)));
    }
}

//! The transport-agnostic server. A message goes `parts` (envelope, `_meta`) → `route` →
//! one module of `methods` per method family → `pipeline` (the one handler pipeline) →
//! `reply` (serialized through the one result envelope, errors classified for the
//! transport). `catalog` holds what is served, precomputed; `def` what users define.

pub(crate) mod apps;
mod authz;
mod builder;
mod catalog;
pub(crate) mod config;
pub(crate) mod context;
pub(crate) mod def;
mod legacy;
mod limit;
mod methods;
#[cfg(feature = "metrics")]
pub(crate) mod metrics;
pub(crate) mod middleware;
pub(crate) mod mount;
pub(crate) mod parts;
mod pipeline;
mod replicate;
pub(crate) mod reply;
pub(crate) mod route;
pub(crate) mod session;
pub(crate) mod slot;
mod tasks;
pub(crate) mod trace;

pub use builder::{BuildError, ServerBuilder};
#[cfg(any(feature = "http", feature = "stdio"))]
pub(crate) use methods::listen::Listen;

use crate::protocol::envelope::{Envelope, ResultMeta, ResultType};
use crate::protocol::{CacheHints, PROTOCOL_VERSION};
use crate::store::{CatalogOp, Change, ItemKind, LocalBus, NotificationBus};
use catalog::compile;
use context::Extensions;
use def::{Icon, Item, PromptDef, ResourceDef, ToolDef};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The server's identity (`io.modelcontextprotocol/serverInfo`).
///
/// ```
/// use mcp_runtime::Server;
///
/// let server = Server::builder("weather", "2.1.0").title("Weather").build().unwrap();
/// let info = server.info();
/// assert_eq!((info.name.as_str(), info.version.as_str()), ("weather", "2.1.0"));
/// assert_eq!(info.title.as_deref(), Some("Weather"));
/// ```
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// The server's programmatic name.
    pub name: String,
    /// The server's version.
    pub version: String,
    /// A human-readable title for display.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description of the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The server's website (`websiteUrl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons for the server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

pub(crate) struct ServerInner {
    pub(crate) info: ServerInfo,
    pub(crate) settings: catalog::Settings,
    pub(crate) limits: config::Limits,
    /// What is served now; replaced as a whole when the set changes.
    pub(crate) catalog: RwLock<Arc<catalog::Catalog>>,
    pub(crate) extensions: Arc<Extensions>,
    /// The bus shared with other instances, if one was set: changes go out through it and
    /// come back through the pump (see `replicate`).
    pub(crate) bus: Option<Arc<dyn NotificationBus>>,
    /// Starts the catalog pump (`replicate::start`), with a bus.
    pub(crate) pump: Option<replicate::Pump>,
    /// What this instance's listen streams and sessions read.
    pub(crate) fanout: LocalBus,
    /// Items every instance holds, switched on at runtime.
    pub(crate) standby: catalog::Entries,
    pub(crate) replication: replicate::Replication,
    /// This instance, as catalog changes name it.
    pub(crate) instance: String,
    /// Where handles live.
    pub(crate) handles: crate::store::HandleConfig,
    /// Middleware around every item (also those added at run time).
    pub(crate) layers: middleware::Layers,
    /// The middleware of each mounted child, by namespace (`ServerBuilder::mount`), for
    /// what a followed upstream adds at run time.
    #[cfg(feature = "proxy")]
    pub(crate) mount_layers: Vec<(String, middleware::Layers)>,
    /// The middleware told of resource updates: the server's and its mounted children's.
    pub(crate) told: middleware::Layers,
    /// Open listen streams.
    pub(crate) live: Arc<AtomicUsize>,
    /// Requests in flight (counted by the transports).
    pub(crate) in_flight: Arc<AtomicUsize>,
    /// The bytes of the requests in flight (`Limits::max_request_bytes_in_flight`).
    pub(crate) request_bytes: Arc<AtomicUsize>,
    /// Messages of legacy sessions let in past the cap on requests in flight
    /// ([`ServerInner::admit_or_reserve`]).
    pub(crate) reserve: Arc<AtomicUsize>,
    /// Cancelled when the server shuts down: listen streams end gracefully.
    pub(crate) shutdown: CancellationToken,
    /// Cancelled when the tasks still running on this instance are to stop (at the end of
    /// an HTTP drain, [`Server::drain_tasks`]): each is recorded as failed.
    pub(crate) stop_tasks: CancellationToken,
    /// Serializes catalog changes (each rebuilds from the current catalog), and holds
    /// when the last one to each item was made (see `replicate`).
    pub(crate) changes: Mutex<replicate::Latest>,
    /// Seals `requestState`.
    pub(crate) sealer: Arc<crate::mrtr::round::Sealer>,
    /// The key is a random one of this process, and the server was not declared single
    /// instance.
    pub(crate) local_key: bool,
    /// How tools run as tasks.
    pub(crate) tasks: config::Tasks,
    /// The legacy era's settings.
    pub(crate) legacy: config::Legacy,
    /// Tasks running on this instance.
    pub(crate) running_tasks: Arc<AtomicUsize>,
    /// What serves `tasks/*`, once a catalog of this server had a tool running as a task:
    /// kept when those tools go, so their tasks are still read and cancelled.
    pub(crate) task_engine: std::sync::OnceLock<&'static tasks::Engine>,
    pub(crate) this: Weak<ServerInner>,
}

/// Messages of legacy sessions let in past the cap on requests in flight at once.
#[cfg(feature = "http")]
const SESSION_MESSAGE_RESERVE: usize = 64;

impl Drop for ServerInner {
    fn drop(&mut self) {
        self.replication.stop.cancel();
    }
}

impl ServerInner {
    /// The middleware of the child mounted under `ns` (none if it had none).
    #[cfg(feature = "proxy")]
    pub(crate) fn mount_layers(&self, ns: &str) -> &middleware::Layers {
        static NONE: middleware::Layers = Vec::new();
        self.mount_layers
            .iter()
            .find(|(n, _)| n == ns)
            .map_or(&NONE, |(_, l)| l)
    }

    /// A weak handle to this server, for request contexts (no cycle through handlers).
    pub(crate) fn weak_self(&self) -> Weak<ServerInner> {
        self.this.clone()
    }

    /// Starts what runs beside the transports (the catalog pump of a shared bus); the
    /// transports call it when they start.
    pub(crate) fn start_background(&self) {
        if let (Some(this), Some(pump)) = (self.this.upgrade(), self.pump) {
            pump(&this);
        }
    }

    /// Whether this instance is ready for traffic: it caught up with the shared catalog.
    pub(crate) fn is_ready(&self) -> bool {
        self.catalog_synced()
    }

    /// The revisions this server serves (`server/discover`, `-32022`): every one with the
    /// legacy era on, the modern one alone otherwise.
    pub(crate) fn versions(&self) -> &'static [&'static str] {
        self.settings.versions
    }

    /// A slot for one more request in flight, unless the cap is reached.
    pub(crate) fn admit(&self) -> Option<slot::Slot> {
        let slot = slot::Slot::acquire(&self.in_flight, self.limits.max_in_flight);
        #[cfg(feature = "metrics")]
        if slot.is_none() {
            metrics::refused_busy();
        }
        slot
    }

    /// [`ServerInner::admit`]; at the cap, for a POST in a legacy session (`in_session`,
    /// asked only then), a slot of a small reserve (`true` with it). Such a POST may carry
    /// the client's answer to a question a handler in flight waits on, or a cancellation:
    /// what frees the cap. Refused with the others, the handler would hold its slot until
    /// its timeout, and every slot could be held so. The caller refuses a request let in
    /// from the reserve.
    #[cfg(feature = "http")]
    pub(crate) fn admit_or_reserve(
        &self,
        in_session: impl FnOnce() -> bool,
    ) -> Option<(slot::Slot, bool)> {
        if let Some(slot) = slot::Slot::acquire(&self.in_flight, self.limits.max_in_flight) {
            return Some((slot, false));
        }
        if in_session()
            && let Some(slot) = slot::Slot::acquire(&self.reserve, SESSION_MESSAGE_RESERVE)
        {
            return Some((slot, true));
        }
        #[cfg(feature = "metrics")]
        metrics::refused_busy();
        None
    }

    /// Makes `slot` (a request's, from [`ServerInner::admit`]) hold `n` more bytes of
    /// the requests in flight; `false` when that is past the limit (busy).
    pub(crate) fn weigh(&self, slot: &mut slot::Slot, n: usize) -> bool {
        let ok = slot.weigh(&self.request_bytes, n, self.limits.max_request_bytes);
        #[cfg(feature = "metrics")]
        if !ok {
            metrics::refused_busy();
        }
        ok
    }

    /// `n` bytes of the requests in flight held alone (a batch's, whose calls take the
    /// units); `None` when that is past the limit (busy).
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn hold_bytes(&self, n: usize) -> Option<slot::Slot> {
        let mut held = slot::Slot::unitless();
        self.weigh(&mut held, n).then_some(held)
    }

    /// The current catalog (a cheap `Arc` clone).
    pub(crate) fn catalog(&self) -> Arc<catalog::Catalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The result envelope of this server's results: `body` with `resultType`, hints and
    /// `_meta` (its own entries, then the server's identity).
    pub(crate) fn envelope<'a, B: Serialize>(
        &'a self,
        result_type: ResultType,
        body: B,
        cache: Option<CacheHints>,
        own_meta: Option<&'a Map<String, Value>>,
    ) -> Envelope<'a, B> {
        Envelope {
            result_type,
            body,
            cache,
            meta: ResultMeta {
                own: own_meta,
                server_info: self.settings.server_info.as_deref(),
            },
        }
    }
}

/// A built MCP server, independent of any transport. Cheap to clone.
///
/// Serve it with [`Server::serve_stdio`][serve-stdio], [`Server::serve_http`][serve-http],
/// or mount [`Server::router`][router] into an axum app.
///
/// ```
/// use mcp_runtime::{Server, tool, tools};
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// /// Adds two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> String {
///     (a + b).to_string()
/// }
///
/// let server = Server::builder("calc", "1.0").tools(tools![add]).build().unwrap();
/// assert_eq!(server.tool_names(), ["add"]);
///
/// // Any byte stream is a transport; here, an in-memory pipe.
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (client, transport) = tokio::io::duplex(64 * 1024);
/// let (read, write) = tokio::io::split(transport);
/// tokio::spawn(server.serve_io(read, write, std::future::pending()));
///
/// let (read, mut write) = tokio::io::split(client);
/// let meta = serde_json::json!({
///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities": {},
/// });
/// let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
///     "params": {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": meta}});
/// write.write_all(format!("{call}\n").as_bytes()).await.unwrap();
/// let reply = BufReader::new(read).lines().next_line().await.unwrap().unwrap();
/// let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
/// assert_eq!(reply["result"]["content"][0]["text"], "5");
/// # });
/// ```
///
#[cfg_attr(feature = "stdio", doc = "[serve-stdio]: Server::serve_stdio")]
#[cfg_attr(not(feature = "stdio"), doc = "[serve-stdio]: crate#features")]
#[cfg_attr(feature = "http", doc = "[serve-http]: Server::serve_http")]
#[cfg_attr(not(feature = "http"), doc = "[serve-http]: crate#features")]
#[cfg_attr(feature = "http", doc = "[router]: Server::router")]
#[cfg_attr(not(feature = "http"), doc = "[router]: crate#features")]
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl Server {
    /// Starts building a server with this name and version (`serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name.into(), version.into())
    }

    /// The server's identity.
    pub fn info(&self) -> &ServerInfo {
        &self.inner.info
    }

    /// The names of the tools, in `tools/list` order.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.catalog().tools.keys().cloned().collect()
    }

    /// The protocol version this server speaks.
    pub fn protocol_version(&self) -> &'static str {
        PROTOCOL_VERSION
    }

    /// Announces a change to every listen stream that asked for it, on every instance
    /// sharing the bus.
    pub fn notify(&self, change: Change) {
        self.inner.publish(change);
    }

    /// Announces that the contents of the resource at `uri` changed: `uri` as this server
    /// serves it, so with the namespace of a mounted server (`docs+notes://1`). A
    /// mounted server's handler names its resources in its own terms with
    /// [`Context::notify_resource_updated`](crate::Context::notify_resource_updated).
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.notify(Change::ResourceUpdated(uri.into()));
    }

    /// The number of open `subscriptions/listen` streams.
    pub fn live_subscriptions(&self) -> usize {
        self.inner.live.load(Ordering::Acquire)
    }

    /// Ends every open listen stream gracefully (each gets its listen result). The
    /// HTTP and stdio transports call this when they shut down.
    pub fn close_subscriptions(&self) {
        self.inner.shutdown.cancel();
    }

    /// Gives the tasks running on this instance up to `within` to end (their results are
    /// recorded), then stops those still running, which are recorded as failed, and
    /// waits a moment for that. The HTTP transport calls this at the end of its drain.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) async fn drain_tasks(&self, within: Duration) {
        let idle = || self.inner.running_tasks.load(Ordering::Acquire) == 0;
        let until = |d: Duration| tokio::time::Instant::now() + d;
        let wait = |deadline: tokio::time::Instant| async move {
            while !idle() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        wait(until(within)).await;
        self.inner.stop_tasks.cancel();
        // A stopped task's handler has a second to wind down; then its end is recorded.
        wait(until(Duration::from_secs(3))).await;
    }

    /// Adds a tool while serving (for example when a plugin loads); listeners that asked
    /// for `toolsListChanged` are told. A tool with the same name is replaced. The tool is
    /// checked as `build()` checks it. With a shared bus, every other instance adds its
    /// standby tool of that name (see [`Server::enable_tool`]).
    pub fn add_tool(&self, tool: ToolDef) -> Result<(), BuildError> {
        self.add_tool_over(tool, |_| true).map(drop)
    }

    /// Adds `tool`, or replaces the tool of its name when `replaceable` says it may:
    /// `Ok(false)`, nothing changed, when it may not.
    pub(crate) fn add_tool_over(
        &self,
        tool: ToolDef,
        replaceable: impl Fn(&Item) -> bool,
    ) -> Result<bool, BuildError> {
        let tool = middleware::layered_tool(tool, &self.inner.layers);
        let entry = Arc::new(compile::tool(tool, &self.inner.extensions).map_err(BuildError)?);
        let name = entry.def.item.name.clone();
        self.change(ItemKind::Tool, &name, CatalogOp::Added, |e| {
            let same = |t: &Arc<compile::ToolEntry>| t.def.item.name == entry.def.item.name;
            if e.tools.iter().any(|t| same(t) && !replaceable(&t.def.item)) {
                return false;
            }
            e.tools.retain(|t| !same(t));
            e.tools.push(entry);
            true
        })
    }

    /// Removes a tool while serving; `false` if there was none by that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.remove_tool_if(name, |_| true)
    }

    /// Removes the tool `name` if `removable` says it may go.
    pub(crate) fn remove_tool_if(&self, name: &str, removable: impl Fn(&Item) -> bool) -> bool {
        self.change(ItemKind::Tool, name, CatalogOp::Removed, |e| {
            let before = e.tools.len();
            e.tools
                .retain(|t| t.def.item.name != name || !removable(&t.def.item));
            e.tools.len() != before
        })
        .unwrap_or(false)
    }

    /// Adds (or replaces) a prompt while serving.
    pub fn add_prompt(&self, prompt: PromptDef) -> Result<(), BuildError> {
        self.add_prompt_over(prompt, |_| true).map(drop)
    }

    /// [`Server::add_tool_over`] for a prompt.
    pub(crate) fn add_prompt_over(
        &self,
        prompt: PromptDef,
        replaceable: impl Fn(&Item) -> bool,
    ) -> Result<bool, BuildError> {
        let prompt = middleware::layered(prompt, &self.inner.layers, true);
        let entry = compile::by_engine_prompt(prompt, &self.inner.extensions);
        let entry = Arc::new(entry.map_err(BuildError)?);
        let name = entry.def.item.name.clone();
        self.change(ItemKind::Prompt, &name, CatalogOp::Added, |e| {
            let same = |p: &Arc<compile::PromptEntry>| p.def.item.name == entry.def.item.name;
            if e.prompts
                .iter()
                .any(|p| same(p) && !replaceable(&p.def.item))
            {
                return false;
            }
            e.prompts.retain(|p| !same(p));
            e.prompts.push(entry);
            true
        })
    }

    /// Removes a prompt while serving; `false` if there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.remove_prompt_if(name, |_| true)
    }

    /// Removes the prompt `name` if `removable` says it may go.
    pub(crate) fn remove_prompt_if(&self, name: &str, removable: impl Fn(&Item) -> bool) -> bool {
        self.change(ItemKind::Prompt, name, CatalogOp::Removed, |e| {
            let before = e.prompts.len();
            e.prompts
                .retain(|p| p.def.item.name != name || !removable(&p.def.item));
            e.prompts.len() != before
        })
        .unwrap_or(false)
    }

    /// Adds (or replaces) a resource or template while serving.
    pub fn add_resource(&self, resource: ResourceDef) -> Result<(), BuildError> {
        self.add_resource_over(resource, |_| true).map(drop)
    }

    /// [`Server::add_tool_over`] for a resource or template (the same URI or template
    /// text).
    pub(crate) fn add_resource_over(
        &self,
        resource: ResourceDef,
        replaceable: impl Fn(&Item) -> bool,
    ) -> Result<bool, BuildError> {
        let resource = middleware::layered(resource, &self.inner.layers, true);
        let entry = compile::by_engine_resource(resource, &self.inner.extensions);
        let entry = Arc::new(entry.map_err(BuildError)?);
        let uri = entry.def.spec.uri.clone();
        self.change(ItemKind::Resource, &uri, CatalogOp::Added, |e| {
            let same = |r: &Arc<compile::ResourceEntry>| r.def.spec.uri == entry.def.spec.uri;
            if e.resources
                .iter()
                .any(|r| same(r) && !replaceable(&r.def.item))
            {
                return false;
            }
            e.resources.retain(|r| !same(r));
            e.resources.push(entry);
            true
        })
    }

    /// Removes a resource or template (by its URI or template text) while serving.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.remove_resource_if(uri, |_| true)
    }

    /// Removes the resource or template `uri` if `removable` says it may go.
    pub(crate) fn remove_resource_if(&self, uri: &str, removable: impl Fn(&Item) -> bool) -> bool {
        self.change(ItemKind::Resource, uri, CatalogOp::Removed, |e| {
            let before = e.resources.len();
            e.resources
                .retain(|r| r.def.spec.uri != uri || !removable(&r.def.item));
            e.resources.len() != before
        })
        .unwrap_or(false)
    }

    /// `Err` when the server would serve multi round-trip requests over a network with a
    /// per-process state key (see [`config::RequestState::single_instance`]).
    pub(crate) fn check_multi_instance(&self) -> Result<(), String> {
        if self.inner.catalog().uses_input && self.inner.local_key {
            return Err(format!(
                "this server asks for input (multi round-trip requests) but has no shared requestState key: set {} or use `.request_state(RequestState::keys(..))`, or declare `RequestState::single_instance()` if only one instance serves it",
                crate::mrtr::KEYS_ENV
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.tool_names())
            .finish()
    }
}

/// Whether `build()` would take the tool, alone and whatever its name: its own checks
/// (schema, headers, `_meta`, icons), not those against other items. For definitions made
/// from what another server lists, whose served names are checked where they are made.
#[cfg(feature = "proxy")]
pub(crate) fn check_tool(mut def: def::ToolDef) -> Result<(), Vec<String>> {
    def.item.name = "tool".into();
    catalog::compile::tool(def, &context::Extensions::default()).map(drop)
}

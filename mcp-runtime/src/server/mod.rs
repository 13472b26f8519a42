//! The transport-agnostic server: registry, dispatch, request context, caching, paging.

mod catalog;
mod completion;
mod context;
mod dispatch;
mod extract;
mod listen;
mod plain;
mod prompt;
mod resource;
mod result;
mod tool;

pub use context::{Context, Logger, Progress, State, TraceContext};
pub use extract::{FromRequest, Requirements};
pub use listen::{Change, LocalBus, NotificationBus};
pub(crate) use result::ToolErrorKind;
pub use result::{IntoToolResult, Json, ToolError};
pub use tool::{
    Arguments, FromToolCall, HeaderValue, Icon, Param, Signature, ToolAnnotations, ToolCall,
    ToolDef, valid_tool_name,
};

pub use completion::{IntoCompleter, KnownArguments, MAX_COMPLETIONS};
pub(crate) use dispatch::{NoGuard, Prepared, Reply, Streams, TransportGuard};
pub(crate) use listen::Listen;
/// An RFC 6570 URI template (levels 1-3), as `#[resource]` templates are parsed and
/// matched.
///
/// ```
/// use mcp_runtime::UriTemplate;
///
/// let template = UriTemplate::parse("notes://{id}{?format}").unwrap();
/// let vars = template.matches("notes://42?format=md").unwrap();
/// assert_eq!(vars["id"], "42");
/// assert_eq!(vars["format"], "md");
/// assert!(template.matches("other://42").is_none());
/// ```
pub use mcp_uri_template::UriTemplate;
pub use prompt::{
    FromPromptCall, GetPromptResult, IntoPromptResult, PromptCall, PromptDef, PromptMessage,
    PromptSignature,
};
pub use resource::{IntoContents, IntoResourceList, Resource, ResourceCall, ResourceDef, SafePath};

/// A serialized error response without an id (the id could not be read).
pub(crate) fn error_body(e: &crate::protocol::RpcError) -> String {
    dispatch::error_reply(None, e, 400).body
}

use crate::protocol::{CacheHints, CacheScope, PROTOCOL_VERSION, keys};

use context::Extensions;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

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

/// A type whose methods are tools: what `#[mcp_runtime::server]` implements for an `impl`
/// block, so the tools share the value's state (a pool, a client).
///
/// `#[server]` writes the impl; by hand it looks like this:
///
/// ```
/// use mcp_runtime::{Provider, Server, Signature, ToolDef, ToolError};
/// use std::sync::Arc;
///
/// struct Greeter {
///     greeting: String,
/// }
///
/// impl Provider for Greeter {
///     fn tools(this: &Arc<Self>) -> Vec<ToolDef> {
///         let this = Arc::clone(this);
///         let greet = ToolDef::new("greet", Signature::new(), move |_call| {
///             let text = this.greeting.clone();
///             async move { Ok::<_, ToolError>(text) }
///         });
///         vec![greet.description("Says the greeting.")]
///     }
/// }
///
/// let greeter = Greeter { greeting: "Hello!".into() };
/// let server = Server::builder("greeter", "1.0").provider(greeter).build().unwrap();
/// assert_eq!(server.tool_names(), ["greet"]);
/// ```
pub trait Provider: Send + Sync + 'static {
    /// The tools, each holding a handle to `this`.
    fn tools(this: &Arc<Self>) -> Vec<ToolDef> {
        let _ = this;
        Vec::new()
    }
    /// The resources and resource templates.
    fn resources(this: &Arc<Self>) -> Vec<ResourceDef> {
        let _ = this;
        Vec::new()
    }
    /// The prompts.
    fn prompts(this: &Arc<Self>) -> Vec<PromptDef> {
        let _ = this;
        Vec::new()
    }
}

/// Default caching hints of `server/discover` and of list results: five minutes, public.
pub const DEFAULT_LIST_CACHE: CacheHints = CacheHints::new(300_000, CacheScope::Public);

/// Default caching hints of `resources/read`: stale at once, private.
pub const DEFAULT_READ_CACHE: CacheHints = CacheHints::new(0, CacheScope::Private);

/// Default number of items in one page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// Default cap on open `subscriptions/listen` streams.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;

/// Default cap on the rounds of one multi round-trip request.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;

/// Default time a request may run before it is cancelled with `-32603`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// Builds a [`Server`].
///
/// ```
/// use mcp_runtime::{tool, tools, Server};
///
/// /// Echoes the text back.
/// #[tool]
/// async fn echo(text: String) -> String {
///     text
/// }
///
/// let server = Server::builder("echo-server", "1.0.0")
///     .instructions("Use `echo` to repeat text.")
///     .tools(tools![echo])
///     .build()
///     .expect("a valid server");
/// # drop(server);
/// ```
pub struct ServerBuilder {
    info: ServerInfo,
    instructions: Option<String>,
    tools: Vec<ToolDef>,
    resources: Vec<ResourceDef>,
    prompts: Vec<PromptDef>,
    extensions: Extensions,
    page_size: usize,
    read_cache: CacheHints,
    list_cache: CacheHints,
    discover_cache: CacheHints,
    server_info_in_meta: bool,
    request_timeout: Duration,
    bus: Option<Arc<dyn NotificationBus>>,
    max_subscriptions: usize,
    keys: Option<crate::mrtr::state::KeyRing>,
    state_ttl: Duration,
    max_rounds: u32,
    single_instance: bool,
}

impl ServerBuilder {
    /// Sets the human-readable title of the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }
    /// Sets the description of the server.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }
    /// Sets the website URL of the server.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }
    /// Adds an icon of the server.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.info.icons.push(icon);
        self
    }
    /// Sets `instructions` in `server/discover`: guidance for the model that does not repeat
    /// the tool descriptions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
    /// Adds one tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }
    /// Adds tools, for example `tools![add, weather]`.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.tools.extend(tools);
        self
    }
    /// Adds one resource or resource template.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.resources.push(resource);
        self
    }
    /// Adds resources, for example `resources![config, file]`.
    pub fn resources(mut self, resources: impl IntoIterator<Item = ResourceDef>) -> Self {
        self.resources.extend(resources);
        self
    }
    /// Adds one prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.prompts.push(prompt);
        self
    }
    /// Adds prompts, for example `prompts![review, summarize]`.
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = PromptDef>) -> Self {
        self.prompts.extend(prompts);
        self
    }
    /// Adds the tools, resources and prompts of a `#[mcp_runtime::server]` impl block;
    /// they share `provider`.
    pub fn provider<P: Provider>(mut self, provider: P) -> Self {
        let this = Arc::new(provider);
        self.tools.extend(P::tools(&this));
        self.resources.extend(P::resources(&this));
        self.prompts.extend(P::prompts(&this));
        self
    }
    /// Default caching hints of `resources/read` results (default [`DEFAULT_READ_CACHE`]);
    /// a resource's own hints take precedence.
    pub fn read_cache(mut self, hints: CacheHints) -> Self {
        self.read_cache = hints;
        self
    }
    /// Shares `value` with every free-function tool taking a `State<T>` parameter.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }
    /// Items per page of list results (default [`DEFAULT_PAGE_SIZE`]; at least 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }
    /// Caching hints of list results (default [`DEFAULT_LIST_CACHE`]). Per-item hints can
    /// only shorten the TTL or make the scope private.
    pub fn list_cache(mut self, hints: CacheHints) -> Self {
        self.list_cache = hints;
        self
    }
    /// Caching hints of `server/discover` (default [`DEFAULT_LIST_CACHE`]).
    pub fn discover_cache(mut self, hints: CacheHints) -> Self {
        self.discover_cache = hints;
        self
    }
    /// Whether results carry `io.modelcontextprotocol/serverInfo` in `_meta` (default: yes).
    pub fn server_info_in_meta(mut self, on: bool) -> Self {
        self.server_info_in_meta = on;
        self
    }
    /// How long a request may run before it is cancelled and answered with `-32603`
    /// (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The bus carrying changes to listen streams (default: [`LocalBus`], in-process).
    pub fn notification_bus(mut self, bus: impl NotificationBus) -> Self {
        self.bus = Some(Arc::new(bus));
        self
    }
    /// The most `subscriptions/listen` streams open at once (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS`]); past it, a listen request gets an error (HTTP 503).
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.max_subscriptions = n;
        self
    }

    /// The keys that seal `requestState` for multi round-trip requests. By default they
    /// come from `MCP_REQUEST_STATE_KEYS` (see [`KeyRing::from_env`]), else a random key of
    /// this process, which the HTTP transport refuses unless [`single_instance`] is set:
    /// with several instances, the next round may land on another one.
    ///
    /// [`KeyRing::from_env`]: crate::KeyRing::from_env
    /// [`single_instance`]: ServerBuilder::single_instance
    pub fn request_state_keys(mut self, keys: crate::KeyRing) -> Self {
        self.keys = Some(keys);
        self
    }
    /// Declares that this server runs as one instance, so a per-process state key is fine.
    pub fn single_instance(mut self) -> Self {
        self.single_instance = true;
        self
    }
    /// How long a `requestState` stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }
    /// The most rounds one multi round-trip request may take (default
    /// [`DEFAULT_MAX_ROUNDS`]).
    pub fn max_rounds(mut self, n: u32) -> Self {
        self.max_rounds = n.max(1);
        self
    }

    /// Checks the definitions and precomputes everything that does not change per request
    /// (discover result, list pages, compiled argument validators).
    pub fn build(self) -> Result<Server, BuildError> {
        let mut errors = Vec::new();
        let ext = &self.extensions;
        let tools: Vec<Arc<catalog::ToolEntry>> = self
            .tools
            .into_iter()
            .filter_map(|d| {
                catalog::compile_tool(d, ext)
                    .map_err(|e| errors.extend(e))
                    .ok()
                    .map(Arc::new)
            })
            .collect();
        let prompts: Vec<Arc<PromptDef>> = self
            .prompts
            .into_iter()
            .filter_map(|d| {
                catalog::check_prompt(d, ext)
                    .map_err(|e| errors.extend(e))
                    .ok()
                    .map(Arc::new)
            })
            .collect();
        let resources: Vec<Arc<catalog::ResourceEntry>> = self
            .resources
            .into_iter()
            .filter_map(|d| {
                catalog::compile_resource(d, ext)
                    .map_err(|e| errors.extend(e))
                    .ok()
                    .map(Arc::new)
            })
            .collect();

        let server_info = serde_json::to_value(&self.info).expect("serializable");
        let settings = catalog::Settings {
            page_size: self.page_size,
            list_cache: self.list_cache,
            discover_cache: self.discover_cache,
            read_cache: self.read_cache,
            instructions: self.instructions,
            meta_value: self
                .server_info_in_meta
                .then(|| json!({ keys::SERVER_INFO: server_info.clone() })),
        };
        let catalog = match catalog::Catalog::assemble(tools, prompts, resources, &settings) {
            Ok(c) if errors.is_empty() => c,
            Ok(_) => return Err(BuildError(errors)),
            Err(e) => {
                errors.extend(e);
                return Err(BuildError(errors));
            }
        };
        let keys = match self.keys {
            Some(k) => k,
            None => match crate::mrtr::state::KeyRing::from_env() {
                Ok(Some(k)) => k,
                Ok(None) => crate::mrtr::state::KeyRing::ephemeral(),
                Err(e) => return Err(BuildError(vec![e])),
            },
        };
        let result_meta = self
            .server_info_in_meta
            .then(|| RawValue::from_string(server_info.to_string()).expect("valid JSON"));
        Ok(Server {
            inner: Arc::new_cyclic(|this| ServerInner {
                this: this.clone(),
                info: self.info,
                server_meta: settings.meta_value.clone(),
                settings,
                catalog: std::sync::RwLock::new(Arc::new(catalog)),
                extensions: Arc::new(self.extensions),
                result_meta,
                request_timeout: self.request_timeout,
                bus: self.bus.unwrap_or_else(|| Arc::new(LocalBus::default())),
                live: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                max_subscriptions: self.max_subscriptions,
                shutdown: tokio_util::sync::CancellationToken::new(),
                changes: std::sync::Mutex::new(()),
                keys,
                state_ttl: self.state_ttl,
                max_rounds: self.max_rounds,
                single_instance: self.single_instance,
            }),
        })
    }
}

/// Why a server could not be built: every problem found, one per line.
///
/// ```
/// use mcp_runtime::{Server, tool, tools};
///
/// /// Says hi.
/// #[tool]
/// async fn hi() -> &'static str {
///     "hi"
/// }
///
/// // The same tool twice: two tools with one name.
/// let err = Server::builder("x", "1.0").tools(tools![hi, hi]).build().unwrap_err();
/// assert!(!err.0.is_empty());
/// assert!(err.to_string().starts_with("the MCP server definition is invalid:"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(pub Vec<String>);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the MCP server definition is invalid:")?;
        for e in &self.0 {
            write!(f, "\n  - {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

pub(crate) struct ServerInner {
    pub(crate) info: ServerInfo,
    pub(crate) settings: catalog::Settings,
    /// What is served now; replaced as a whole when the set changes.
    pub(crate) catalog: std::sync::RwLock<Arc<catalog::Catalog>>,
    pub(crate) server_meta: Option<Value>,
    pub(crate) extensions: Arc<Extensions>,
    pub(crate) result_meta: Option<Box<RawValue>>,
    pub(crate) request_timeout: Duration,
    pub(crate) bus: Arc<dyn NotificationBus>,
    /// Open listen streams.
    pub(crate) live: Arc<std::sync::atomic::AtomicUsize>,
    pub(crate) max_subscriptions: usize,
    /// Cancelled when the server shuts down: listen streams end gracefully.
    pub(crate) shutdown: tokio_util::sync::CancellationToken,
    /// Serializes catalog changes (each rebuilds from the current catalog).
    pub(crate) changes: std::sync::Mutex<()>,
    /// Seals `requestState`.
    pub(crate) keys: crate::mrtr::state::KeyRing,
    pub(crate) state_ttl: Duration,
    pub(crate) max_rounds: u32,
    /// Declared single-instance: an ephemeral key is fine on HTTP.
    pub(crate) single_instance: bool,
    pub(crate) this: std::sync::Weak<ServerInner>,
}

impl ServerInner {
    /// A weak handle to this server, for request contexts (no cycle through handlers).
    pub(crate) fn weak_self(&self) -> std::sync::Weak<ServerInner> {
        self.this.clone()
    }

    /// The current catalog (a cheap `Arc` clone).
    pub(crate) fn catalog(&self) -> Arc<catalog::Catalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// A result object with `resultType` and the server's `_meta` added, serialized.
    pub(crate) fn complete_result(&self, mut map: Map<String, Value>) -> String {
        map.insert("resultType".into(), json!("complete"));
        if let Some(Value::Object(server)) = &self.server_meta {
            let meta = map.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                for (k, v) in server {
                    meta.insert(k.clone(), v.clone());
                }
            }
        }
        Value::Object(map).to_string()
    }
}

/// A built MCP server, independent of any transport. Cheap to clone.
///
/// Serve it with [`Server::serve_stdio`], [`Server::serve_http`], or mount
/// [`Server::router`] into an axum app.
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
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl Server {
    /// Starts building a server with this name and version (`serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: ServerInfo {
                name: name.into(),
                version: version.into(),
                title: None,
                description: None,
                website_url: None,
                icons: Vec::new(),
            },
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            extensions: Extensions::default(),
            page_size: DEFAULT_PAGE_SIZE,
            read_cache: DEFAULT_READ_CACHE,
            list_cache: DEFAULT_LIST_CACHE,
            discover_cache: DEFAULT_LIST_CACHE,
            server_info_in_meta: true,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            bus: None,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            keys: None,
            state_ttl: crate::mrtr::state::DEFAULT_STATE_TTL,
            max_rounds: DEFAULT_MAX_ROUNDS,
            single_instance: false,
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &ServerInfo {
        &self.inner.info
    }

    /// The names of the tools, in `tools/list` order.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.catalog().tools.keys().cloned().collect()
    }

    /// Announces a change to every listen stream that asked for it.
    pub fn notify(&self, change: Change) {
        self.inner.bus.publish(change);
    }

    /// Announces that the contents of the resource at `uri` changed.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.notify(Change::ResourceUpdated(uri.into()));
    }

    /// The number of open `subscriptions/listen` streams.
    pub fn live_subscriptions(&self) -> usize {
        self.inner.live.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Ends every open listen stream gracefully (each gets its listen result). The
    /// HTTP and stdio transports call this when they shut down.
    pub fn close_subscriptions(&self) {
        self.inner.shutdown.cancel();
    }

    /// Adds a tool while serving (for example when a plugin loads); listeners that asked
    /// for `toolsListChanged` are told. A tool with the same name is replaced.
    pub fn add_tool(&self, tool: ToolDef) -> Result<(), BuildError> {
        let entry =
            Arc::new(catalog::compile_tool(tool, &self.inner.extensions).map_err(BuildError)?);
        self.change(Change::ToolsListChanged, |tools, _, _| {
            tools.retain(|t| t.def.name != entry.def.name);
            tools.push(entry);
            true
        })
        .map(drop)
    }

    /// Removes a tool while serving; `false` if there was none by that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.change(Change::ToolsListChanged, |tools, _, _| {
            let before = tools.len();
            tools.retain(|t| t.def.name != name);
            tools.len() != before
        })
        .unwrap_or(false)
    }

    /// Adds (or replaces) a prompt while serving.
    pub fn add_prompt(&self, prompt: PromptDef) -> Result<(), BuildError> {
        let entry =
            Arc::new(catalog::check_prompt(prompt, &self.inner.extensions).map_err(BuildError)?);
        self.change(Change::PromptsListChanged, |_, prompts, _| {
            prompts.retain(|p| p.name != entry.name);
            prompts.push(entry);
            true
        })
        .map(drop)
    }

    /// Removes a prompt while serving; `false` if there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.change(Change::PromptsListChanged, |_, prompts, _| {
            let before = prompts.len();
            prompts.retain(|p| p.name != name);
            prompts.len() != before
        })
        .unwrap_or(false)
    }

    /// Adds (or replaces) a resource or template while serving.
    pub fn add_resource(&self, resource: ResourceDef) -> Result<(), BuildError> {
        let entry = Arc::new(
            catalog::compile_resource(resource, &self.inner.extensions).map_err(BuildError)?,
        );
        self.change(Change::ResourcesListChanged, |_, _, resources| {
            resources.retain(|r| r.def.uri != entry.def.uri);
            resources.push(entry);
            true
        })
        .map(drop)
    }

    /// Removes a resource or template (by its URI or template text) while serving.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.change(Change::ResourcesListChanged, |_, _, resources| {
            let before = resources.len();
            resources.retain(|r| r.def.uri != uri);
            resources.len() != before
        })
        .unwrap_or(false)
    }

    /// Rebuilds the catalog with `edit` applied, swaps it in, and announces `change`.
    /// `edit` says whether it changed anything; `Ok(false)` when it did not.
    fn change(
        &self,
        change: Change,
        edit: impl FnOnce(
            &mut Vec<Arc<catalog::ToolEntry>>,
            &mut Vec<Arc<PromptDef>>,
            &mut Vec<Arc<catalog::ResourceEntry>>,
        ) -> bool,
    ) -> Result<bool, BuildError> {
        let _serial = self.inner.changes.lock().unwrap_or_else(|e| e.into_inner());
        let catalog::Entries {
            mut tools,
            mut prompts,
            mut resources,
        } = self.inner.catalog().entries();
        if !edit(&mut tools, &mut prompts, &mut resources) {
            return Ok(false);
        }
        let next = catalog::Catalog::assemble(tools, prompts, resources, &self.inner.settings)
            .map_err(BuildError)?;
        *self
            .inner
            .catalog
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        self.notify(change);
        Ok(true)
    }

    /// `Err` when the server would serve multi round-trip requests over a network with a
    /// per-process state key (see [`ServerBuilder::single_instance`]).
    pub(crate) fn check_multi_instance(&self) -> Result<(), String> {
        let uses_input = self.inner.catalog().uses_input;
        if uses_input && self.inner.keys.is_ephemeral() && !self.inner.single_instance {
            return Err(format!(
                "this server asks for input (multi round-trip requests) but has no shared requestState key: set {} or call `.request_state_keys(..)`, or declare `.single_instance()` if only one instance serves it",
                crate::mrtr::state::KEYS_ENV
            ));
        }
        Ok(())
    }

    /// The protocol version this server speaks.
    pub fn protocol_version(&self) -> &'static str {
        PROTOCOL_VERSION
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

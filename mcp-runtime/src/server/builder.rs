//! [`ServerBuilder`]: what a server serves and how, checked and precomputed by `build()`.

use super::catalog::{self, Catalog, Entries, compile};
use super::config::{Caching, Keys, Legacy, Limits, RequestState, Tasks};
use super::context::Extensions;
use super::def::{Icon, PromptDef, Provider, ResourceDef, ToolDef};
use super::{Server, ServerInfo, ServerInner};
use crate::mrtr::KeyRing;
use crate::mrtr::round::{SealKeys, Sealer};
use crate::store::{HandleConfig, HandleStore, LocalBus, NotificationBus};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

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
    pub(super) info: ServerInfo,
    pub(super) instructions: Option<String>,
    pub(super) tools: Vec<ToolDef>,
    pub(super) resources: Vec<ResourceDef>,
    pub(super) prompts: Vec<PromptDef>,
    pub(super) extensions: Extensions,
    pub(super) limits: Limits,
    pub(super) caching: Caching,
    pub(super) request_state: RequestState,
    pub(super) tasks: Tasks,
    pub(super) legacy: Legacy,
    pub(super) server_info_in_meta: bool,
    pub(super) bus: Option<Arc<dyn NotificationBus>>,
    /// What starts the catalog pump: set with the bus, so a server without one does not
    /// link the pump's code.
    pub(super) pump: Option<super::replicate::Pump>,
    pub(super) auth: Option<crate::auth::Auth>,
    pub(super) standby_tools: Vec<ToolDef>,
    pub(super) standby_prompts: Vec<PromptDef>,
    pub(super) standby_resources: Vec<ResourceDef>,
    pub(super) handles: HandleConfig,
    pub(super) layers: super::middleware::Layers,
    /// The middleware of children mounted or merged in (and of theirs), around their own
    /// items: told of resource updates as the server's own are.
    pub(super) child_layers: super::middleware::Layers,
    /// The middleware of each mounted child, by namespace: around the items a followed
    /// upstream adds under it at run time, as around those it had at build.
    #[cfg(feature = "proxy")]
    pub(super) mount_layers: Vec<(String, super::middleware::Layers)>,
    /// Problems found by `mount`, reported by `build`.
    pub(super) mount_errors: Vec<String>,
    /// Extensions declared in `capabilities.extensions`.
    pub(super) declared: serde_json::Map<String, serde_json::Value>,
}

impl ServerBuilder {
    pub(crate) fn new(name: String, version: String) -> Self {
        ServerBuilder {
            info: ServerInfo {
                name,
                version,
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
            limits: Limits::default(),
            caching: Caching::default(),
            request_state: RequestState::default(),
            tasks: Tasks::default(),
            legacy: Legacy::default(),
            server_info_in_meta: true,
            bus: None,
            pump: None,
            auth: None,
            standby_tools: Vec::new(),
            standby_prompts: Vec::new(),
            standby_resources: Vec::new(),
            handles: HandleConfig::default(),
            layers: Vec::new(),
            child_layers: Vec::new(),
            #[cfg(feature = "proxy")]
            mount_layers: Vec::new(),
            mount_errors: Vec::new(),
            declared: serde_json::Map::new(),
        }
    }

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
    /// Shares `value` with every handler taking a `State<T>` parameter.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }
    /// Request timeout, listen-stream cap, list page size (see [`Limits`]).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
    /// Caching hints of lists, `server/discover` and reads (see [`Caching`]).
    pub fn caching(mut self, caching: Caching) -> Self {
        self.caching = caching;
        self
    }
    /// How `requestState` is sealed: keys, lifetime, round cap (see [`RequestState`]).
    pub fn request_state(mut self, request_state: RequestState) -> Self {
        self.request_state = request_state;
        self
    }
    /// How tools run as tasks: the shared store, TTL, polling interval, cap (see
    /// [`Tasks`]).
    pub fn tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = tasks;
        self
    }
    /// The legacy era (clients that open with `initialize`): on by default; sessions cap
    /// and idle timeout (see [`Legacy`]).
    pub fn legacy(mut self, legacy: Legacy) -> Self {
        self.legacy = legacy;
        self
    }
    /// Serves 2026-07-28 alone: `initialize` gets `-32022` naming the supported versions.
    pub fn modern_only(mut self) -> Self {
        self.legacy = Legacy::off();
        self
    }
    /// Authorization over HTTP: the server is an OAuth 2.1 resource server (see
    /// [`Auth`](crate::auth::Auth)). Every HTTP request then needs a valid bearer token;
    /// items with scopes need them granted. stdio is not affected (the spec takes its
    /// credentials from the environment).
    pub fn auth(mut self, auth: crate::auth::Auth) -> Self {
        self.auth = Some(auth);
        self
    }
    /// The bus carrying changes to listen streams (default: [`LocalBus`], in-process).
    ///
    /// A bus set here is treated as shared with other instances: every change (and every
    /// runtime change to the catalog) goes out through it and reaches this instance's
    /// listeners when it comes back, so each listener is told once, whichever instance
    /// made the change. See [`ServerBuilder::standby_tools`] for catalog changes.
    pub fn notification_bus(mut self, bus: impl NotificationBus) -> Self {
        self.bus = Some(Arc::new(bus));
        self.pump = Some(super::replicate::start);
        self
    }

    /// Tools every instance holds but does not serve until one instance switches them on
    /// with [`Server::enable_tool`] (or adds one by that name with [`Server::add_tool`]):
    /// with a shared [`notification_bus`](Self::notification_bus), the change reaches every
    /// instance, each serves the tool, and each listener is told once. Checked like the
    /// served tools.
    ///
    /// ```
    /// use mcp_runtime::{Server, tool, tools};
    ///
    /// /// Says hi.
    /// #[tool]
    /// async fn hi() -> &'static str { "hi" }
    /// /// Exports everything (switched on when the export plugin is licensed).
    /// #[tool]
    /// async fn export() -> &'static str { "exported" }
    ///
    /// let server = Server::builder("x", "1.0")
    ///     .tools(tools![hi])
    ///     .standby_tools(tools![export])
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.tool_names(), ["hi"]);
    /// assert!(server.enable_tool("export").unwrap());
    /// assert_eq!(server.tool_names(), ["export", "hi"]);
    /// assert!(server.enable_tool("nope").is_err());
    /// ```
    pub fn standby_tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.standby_tools.extend(tools);
        self
    }

    /// Prompts held on standby (see [`ServerBuilder::standby_tools`]).
    pub fn standby_prompts(mut self, prompts: impl IntoIterator<Item = PromptDef>) -> Self {
        self.standby_prompts.extend(prompts);
        self
    }

    /// Resources held on standby (see [`ServerBuilder::standby_tools`]).
    pub fn standby_resources(mut self, resources: impl IntoIterator<Item = ResourceDef>) -> Self {
        self.standby_resources.extend(resources);
        self
    }

    /// Wraps every tool, prompt and resource (also those added later) in `middleware`;
    /// the first one set is the outermost. See [`crate::middleware`].
    ///
    /// ```
    /// use mcp_runtime::middleware::{RateLimit, Timing};
    /// use mcp_runtime::{Server, tool, tools};
    /// use std::time::Duration;
    ///
    /// /// Says hi.
    /// #[tool]
    /// async fn hi() -> &'static str { "hi" }
    ///
    /// let server = Server::builder("x", "1.0")
    ///     .tools(tools![hi])
    ///     .layer(Timing)
    ///     .layer(RateLimit::new(100, Duration::from_secs(60)).per_item())
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// ```
    pub fn layer(mut self, middleware: impl super::middleware::Middleware) -> Self {
        self.layers.push(Arc::new(middleware));
        self
    }

    /// Where [`Handles`](crate::store::Handles) keep their values (default: in this
    /// process, [`MemoryHandleStore`](crate::store::MemoryHandleStore)). A fleet shares
    /// one, such as [`RedisStore`][redis].
    ///
    #[cfg_attr(feature = "redis", doc = "[redis]: crate::store::redis::RedisStore")]
    #[cfg_attr(not(feature = "redis"), doc = "[redis]: crate#features")]
    pub fn handle_store(mut self, store: impl HandleStore) -> Self {
        self.handles.given = Arc::new(std::sync::OnceLock::from(
            Arc::new(store) as Arc<dyn HandleStore>
        ));
        self
    }

    /// How long a handle lives unless the tool says otherwise (default
    /// [`DEFAULT_HANDLE_TTL`](crate::store::DEFAULT_HANDLE_TTL), an hour; zero is refused
    /// by `build`).
    pub fn handle_ttl(mut self, ttl: Duration) -> Self {
        self.handles.ttl = ttl;
        self
    }
    /// Whether results carry `io.modelcontextprotocol/serverInfo` in `_meta` (default: yes).
    pub fn server_info_in_meta(mut self, on: bool) -> Self {
        self.server_info_in_meta = on;
        self
    }

    /// Checks every definition (by the rules the macros apply at compile time) and
    /// precomputes everything that does not change per request (discover result, list
    /// pages). Every problem is reported at once.
    ///
    /// Argument validators of hand-written `inputSchema`s are compiled here, so a schema
    /// that does not compile is refused now. Those of generated schemas (the macros',
    /// `Signature`'s) are compiled on the tool's first call: schemars output is valid by
    /// construction, and the parts of one that can still fail (patterns, references
    /// outside the schema, identifiers, a declared dialect) make it compiled here too. A
    /// hand-written `JsonSchema` impl that breaks the meta-schema is the one case left
    /// to the first call, which then fails with a tool error (and logs why).
    pub fn build(mut self) -> Result<Server, BuildError> {
        let mut errors = std::mem::take(&mut self.mount_errors);
        let ext = &self.extensions;
        compile::check_icons(&self.info.icons, "the server", &mut errors);
        super::config::check_zero(
            &self.limits,
            &self.request_state,
            self.handles.ttl,
            &self.tasks,
            &self.legacy,
            &mut errors,
        );
        if let Some(a) = &self.auth {
            errors.extend(a.check());
        }
        let layers = &self.layers;
        let tools = |v: Vec<ToolDef>| -> Vec<ToolDef> {
            v.into_iter()
                .map(|d| super::middleware::layered_tool(d, layers))
                .collect()
        };
        let prompts = |v: Vec<PromptDef>| -> Vec<PromptDef> {
            v.into_iter()
                .map(|d| super::middleware::layered(d, layers, true))
                .collect()
        };
        let resources = |v: Vec<ResourceDef>| -> Vec<ResourceDef> {
            v.into_iter()
                .map(|d| super::middleware::layered(d, layers, true))
                .collect()
        };
        let (standby_tools, standby_prompts, standby_resources) = (
            tools(self.standby_tools),
            prompts(self.standby_prompts),
            resources(self.standby_resources),
        );
        let (own_tools, own_prompts, own_resources) = (
            tools(self.tools),
            prompts(self.prompts),
            resources(self.resources),
        );
        let entries = Entries {
            tools: compile::all(own_tools, ext, compile::tool, &mut errors),
            prompts: compile::all(own_prompts, ext, compile::by_engine_prompt, &mut errors),
            resources: compile::all(own_resources, ext, compile::by_engine_resource, &mut errors),
        };
        let standby = Entries {
            tools: compile::all(standby_tools, ext, compile::tool, &mut errors),
            prompts: compile::all(standby_prompts, ext, compile::by_engine_prompt, &mut errors),
            resources: compile::all(
                standby_resources,
                ext,
                compile::by_engine_resource,
                &mut errors,
            ),
        };
        let server_info = self
            .server_info_in_meta
            .then(|| serde_json::value::to_raw_value(&self.info).expect("server info serializes"));
        let settings = catalog::Settings {
            versions: if self.legacy.enabled {
                crate::protocol::SUPPORTED_VERSIONS
            } else {
                crate::protocol::MODERN_VERSIONS
            },
            page_size: self.limits.page_size,
            caching: self.caching,
            instructions: self.instructions,
            server_info,
            auth: self.auth.map(Arc::new),
            extensions: std::mem::take(&mut self.declared),
        };
        let catalog = match Catalog::assemble(entries, &settings) {
            Ok(c) if errors.is_empty() => c,
            Ok(_) => return Err(BuildError(errors)),
            Err(e) => {
                errors.extend(e);
                return Err(BuildError(errors));
            }
        };
        // Key material from the environment is checked now and derived into keys on
        // the first round (by the input engine).
        let (keys, local_key) = match self.request_state.keys {
            Keys::Given(k) => (SealKeys::Ring(k), false),
            Keys::FromEnv { single_instance } => match crate::mrtr::state::env_material() {
                Ok(Some(m)) => (SealKeys::Material(m, Default::default()), false),
                Ok(None) => (SealKeys::Ring(KeyRing::ephemeral()), !single_instance),
                Err(e) => return Err(BuildError(vec![e])),
            },
        };
        let sealer = Sealer {
            audience: self.info.name.clone(),
            keys,
            ttl: self.request_state.ttl,
            leeway: self.request_state.leeway,
            max_rounds: self.request_state.max_rounds,
            replay: self.request_state.replay.map(|r| r.0),
        };
        let task_engine = catalog.task_engine;
        let server = Server {
            inner: Arc::new_cyclic(|this| ServerInner {
                this: this.clone(),
                info: self.info,
                settings,
                limits: self.limits,
                catalog: std::sync::RwLock::new(Arc::new(catalog)),
                extensions: Arc::new(self.extensions),
                bus: self.bus,
                pump: self.pump,
                fanout: LocalBus::default(),
                standby,
                replication: Default::default(),
                instance: instance_id(),
                handles: self.handles,
                told: self
                    .layers
                    .iter()
                    .chain(&self.child_layers)
                    .cloned()
                    .collect(),
                layers: self.layers,
                #[cfg(feature = "proxy")]
                mount_layers: self.mount_layers,
                live: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                in_flight: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                request_bytes: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                reserve: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                shutdown: tokio_util::sync::CancellationToken::new(),
                stop_tasks: tokio_util::sync::CancellationToken::new(),
                changes: std::sync::Mutex::default(),
                sealer: Arc::new(sealer),
                local_key,
                tasks: self.tasks,
                legacy: self.legacy,
                running_tasks: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                task_engine: task_engine.map_or_else(std::sync::OnceLock::new, Into::into),
            }),
        };
        // Inside a runtime, the pump of a shared bus starts now; otherwise when a
        // transport starts.
        server.inner.start_background();
        Ok(server)
    }
}

/// A random id for this instance (catalog changes name their origin).
fn instance_id() -> String {
    let mut b = [0u8; 8];
    let _ = getrandom::fill(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
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
/// // The same tool twice, from two lists (within one `tools![..]` it is a compile error).
/// let err = Server::builder("x", "1.0").tools(tools![hi]).tools(tools![hi]).build().unwrap_err();
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

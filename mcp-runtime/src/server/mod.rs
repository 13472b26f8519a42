//! The transport-agnostic server: registry, dispatch, request context, caching, paging.

mod completion;
mod context;
mod dispatch;
mod extract;
mod plain;
mod prompt;
mod resource;
mod result;
mod tool;

pub use context::{Context, Logger, Progress, State, TraceContext};
pub use extract::{FromRequest, Requirements};
pub use result::{IntoToolResult, Json, ToolError};
pub use tool::{
    Arguments, FromToolCall, HeaderValue, Icon, Param, Signature, ToolAnnotations, ToolCall,
    ToolDef, valid_tool_name,
};

pub use completion::{IntoCompleter, KnownArguments, MAX_COMPLETIONS};
pub(crate) use dispatch::{NoGuard, Prepared, Reply, Streams, TransportGuard};
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

use crate::protocol::{CacheHints, CacheScope, PROTOCOL_VERSION, SUPPORTED_VERSIONS, keys};
use crate::schema::ArgumentValidator;

use context::Extensions;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The server's identity (`io.modelcontextprotocol/serverInfo`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

/// A type whose methods are tools: what `#[mcp_runtime::server]` implements for an `impl`
/// block, so the tools share the value's state (a pool, a client).
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

    /// Checks the definitions and precomputes everything that does not change per request
    /// (discover result, list pages, compiled argument validators).
    pub fn build(self) -> Result<Server, BuildError> {
        let mut errors = Vec::new();
        let mut tools: BTreeMap<String, Arc<ToolEntry>> = BTreeMap::new();
        for def in self.tools {
            if !valid_tool_name(&def.name) {
                errors.push(format!(
                    "tool name `{}` is invalid: use 1 to 64 characters from [A-Za-z0-9_.-]",
                    def.name
                ));
            }
            if let Some(e) = def.input_schema.get("$invalid") {
                errors.push(format!(
                    "tool `{}`: the hand-written inputSchema is not valid JSON: {e}",
                    def.name
                ));
            } else if def.input_schema.get("type") != Some(&json!("object")) {
                errors.push(format!(
                    "tool `{}`: inputSchema must have \"type\": \"object\" at its root",
                    def.name
                ));
            }
            for (id, ty) in &def.requirements.required_state {
                if !self.extensions.contains(*id) {
                    errors.push(format!(
                        "tool `{}` takes `State<{ty}>`, but the builder has no state of that type; add it with `.state(...)`",
                        def.name
                    ));
                }
            }
            let validator = match ArgumentValidator::compile(&def.input_schema) {
                Ok(v) => Some(v),
                Err(e) => {
                    errors.push(format!(
                        "tool `{}`: inputSchema does not compile: {e}",
                        def.name
                    ));
                    None
                }
            };
            let headers = match crate::protocol::headers::header_params(&def.input_schema) {
                Ok(h) => h,
                Err(es) => {
                    errors.extend(es.into_iter().map(|e| format!("tool `{}`: {e}", def.name)));
                    Vec::new()
                }
            };
            let json = def.to_json();
            let name = def.name.clone();
            if tools.contains_key(&name) {
                errors.push(format!(
                    "two tools are named `{name}`; tool names must be unique"
                ));
                continue;
            }
            if let Some(validator) = validator {
                tools.insert(
                    name,
                    Arc::new(ToolEntry {
                        def,
                        validator,
                        json,
                        headers,
                    }),
                );
            }
        }
        let check_state = |what: &str, name: &str, req: &Requirements, errors: &mut Vec<String>| {
            for (id, ty) in &req.required_state {
                if !self.extensions.contains(*id) {
                    errors.push(format!(
                        "{what} `{name}` takes `State<{ty}>`, but the builder has no state of that type; add it with `.state(...)`"
                    ));
                }
            }
        };

        let mut prompts: BTreeMap<String, Arc<PromptDef>> = BTreeMap::new();
        for def in self.prompts {
            if def.name.is_empty() {
                errors.push("a prompt name cannot be empty".into());
            }
            check_state("prompt", &def.name, &def.requirements, &mut errors);
            for arg in def.completers.keys() {
                if !def.arguments.iter().any(|(n, _, _)| n == arg) {
                    errors.push(format!("prompt `{}` has a completer for `{arg}`, which is not one of its arguments", def.name));
                }
            }
            if prompts.contains_key(&def.name) {
                errors.push(format!(
                    "two prompts are named `{}`; prompt names must be unique",
                    def.name
                ));
                continue;
            }
            prompts.insert(def.name.clone(), Arc::new(def));
        }

        let mut static_resources: BTreeMap<String, Arc<ResourceEntry>> = BTreeMap::new();
        let mut templates: Vec<Arc<ResourceEntry>> = Vec::new();
        for def in self.resources {
            check_state("resource", &def.uri, &def.requirements, &mut errors);
            if let Some(p) = def.annotations.as_ref().and_then(|a| a.priority)
                && !(0.0..=1.0).contains(&p)
            {
                errors.push(format!(
                    "resource `{}`: annotation priority {p} is outside 0..=1",
                    def.uri
                ));
            }
            let template = match UriTemplate::parse(&def.uri) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(format!("resource `{}`: invalid URI template: {e}", def.uri));
                    continue;
                }
            };
            let variables: Vec<String> = template
                .variables()
                .into_iter()
                .map(|(v, _)| v.to_owned())
                .collect();
            for var in def.completers.keys() {
                if !variables.contains(var) {
                    errors.push(format!("resource `{}` has a completer for `{var}`, which is not a variable of its template", def.uri));
                }
            }
            if template.is_static() {
                if def.lister.is_some() {
                    errors.push(format!("resource `{}` has a list function, but only templates can list what they produce", def.uri));
                }
                if static_resources.contains_key(&def.uri) {
                    errors.push(format!("two resources have the URI `{}`", def.uri));
                    continue;
                }
                static_resources.insert(
                    def.uri.clone(),
                    Arc::new(ResourceEntry {
                        def,
                        template,
                        variables,
                    }),
                );
            } else {
                if let Some(other) = templates.iter().find(|t| t.template.overlaps(&template)) {
                    errors.push(format!(
                        "resource templates `{}` and `{}` can match the same URI; make their fixed parts differ",
                        other.def.uri, def.uri
                    ));
                    continue;
                }
                templates.push(Arc::new(ResourceEntry {
                    def,
                    template,
                    variables,
                }));
            }
        }
        templates.sort_by(|a, b| a.def.uri.cmp(&b.def.uri));

        if !errors.is_empty() {
            return Err(BuildError(errors));
        }

        let server_info = serde_json::to_value(&self.info).expect("serializable");
        let meta_value = self
            .server_info_in_meta
            .then(|| json!({ keys::SERVER_INFO: server_info.clone() }));
        let result_meta = self
            .server_info_in_meta
            .then(|| RawValue::from_string(server_info.to_string()).expect("valid JSON"));

        let uses_logging = tools.values().any(|t| t.def.requirements.uses_logging)
            || prompts.values().any(|p| p.requirements.uses_logging)
            || static_resources
                .values()
                .chain(&templates)
                .any(|r| r.def.requirements.uses_logging);
        let has_completions = prompts.values().any(|p| !p.completers.is_empty())
            || templates.iter().any(|t| !t.def.completers.is_empty());
        let mut capabilities = Map::new();
        if !tools.is_empty() {
            capabilities.insert("tools".into(), json!({}));
        }
        if !prompts.is_empty() {
            capabilities.insert("prompts".into(), json!({}));
        }
        if !static_resources.is_empty() || !templates.is_empty() {
            capabilities.insert("resources".into(), json!({}));
        }
        if has_completions {
            capabilities.insert("completions".into(), json!({}));
        }
        if uses_logging {
            capabilities.insert("logging".into(), json!({}));
        }

        let mut discover = Map::new();
        discover.insert("resultType".into(), json!("complete"));
        discover.insert("supportedVersions".into(), json!(SUPPORTED_VERSIONS));
        discover.insert("capabilities".into(), Value::Object(capabilities));
        if let Some(i) = &self.instructions {
            discover.insert("instructions".into(), json!(i));
        }
        discover.insert("ttlMs".into(), json!(self.discover_cache.ttl_ms));
        discover.insert(
            "cacheScope".into(),
            json!(self.discover_cache.scope.as_str()),
        );
        if let Some(m) = &meta_value {
            discover.insert("_meta".into(), m.clone());
        }

        let tool_list = ListPages::build(
            "tools",
            tools
                .values()
                .map(|t| (t.def.name.clone(), t.json.clone(), t.def.cache))
                .collect(),
            self.page_size,
            self.list_cache,
            meta_value.as_ref(),
        );

        let prompt_list = ListPages::build(
            "prompts",
            prompts
                .values()
                .map(|p| (p.name.clone(), p.to_json().to_string(), None))
                .collect(),
            self.page_size,
            self.list_cache,
            meta_value.as_ref(),
        );
        let listers: Vec<resource::Lister> = templates
            .iter()
            .filter_map(|t| t.def.lister.clone())
            .collect();
        // A list with dynamic entries is private unless every template says otherwise.
        let lister_hints = templates
            .iter()
            .filter(|t| t.def.lister.is_some())
            .map(|t| t.def.cache.unwrap_or(self.read_cache));
        let resource_list = ListPages::build_with_hints(
            "resources",
            static_resources
                .values()
                .map(|r| {
                    (
                        r.def.uri.clone(),
                        r.def.to_json(false).to_string(),
                        r.def.cache,
                    )
                })
                .collect(),
            self.page_size,
            lister_hints.fold(self.list_cache, CacheHints::combine),
            meta_value.as_ref(),
        );
        let template_list = ListPages::build(
            "resourceTemplates",
            templates
                .iter()
                .map(|t| {
                    (
                        t.def.uri.clone(),
                        t.def.to_json(true).to_string(),
                        t.def.cache,
                    )
                })
                .collect(),
            self.page_size,
            self.list_cache,
            meta_value.as_ref(),
        );
        let static_json = static_resources
            .values()
            .map(|r| (r.def.uri.clone(), r.def.to_json(false)))
            .collect();

        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                discover: Value::Object(discover).to_string(),
                tools,
                tool_list,
                prompts,
                prompt_list,
                static_resources: static_json,
                statics: static_resources,
                templates,
                resource_list,
                template_list,
                listers,
                has_completions,
                read_cache: self.read_cache,
                page_size: self.page_size,
                server_meta: meta_value.clone(),
                extensions: Arc::new(self.extensions),
                result_meta,
                request_timeout: self.request_timeout,
            }),
        })
    }
}

/// Why a server could not be built: every problem found, one per line.
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

pub(crate) struct ToolEntry {
    pub(crate) def: ToolDef,
    pub(crate) validator: ArgumentValidator,
    /// The definition as listed (JSON text).
    pub(crate) json: String,
    /// Its `x-mcp-header` parameters.
    pub(crate) headers: Vec<crate::protocol::headers::HeaderParam>,
}

/// The precomputed pages of one list method.
pub(crate) struct ListPages {
    names: Vec<String>,
    page_size: usize,
    /// Each item as JSON text.
    items: Vec<String>,
    key: &'static str,
    pub(crate) hints: CacheHints,
    meta: Option<Value>,
    /// Result JSON of each page, by index of its first item.
    pages: BTreeMap<usize, String>,
}

impl ServerInner {
    pub(crate) fn has_resources(&self) -> bool {
        !self.statics.is_empty() || !self.templates.is_empty()
    }

    /// The resource serving `uri`: a fixed resource with that URI, else the first template
    /// (in template order) that matches, with the variables it bound.
    pub(crate) fn find_resource(
        &self,
        uri: &str,
    ) -> Option<(Arc<ResourceEntry>, BTreeMap<String, String>)> {
        if let Some(r) = self.statics.get(uri) {
            return Some((Arc::clone(r), BTreeMap::new()));
        }
        self.templates
            .iter()
            .find_map(|t| t.template.matches(uri).map(|vars| (Arc::clone(t), vars)))
    }

    /// The resource or template whose URI (template text) is exactly `uri`.
    pub(crate) fn resource_by_uri(&self, uri: &str) -> Option<&Arc<ResourceEntry>> {
        self.statics
            .get(uri)
            .or_else(|| self.templates.iter().find(|t| t.def.uri == uri))
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

impl ListPages {
    fn build(
        key: &'static str,
        entries: Vec<(String, String, Option<CacheHints>)>,
        page_size: usize,
        default: CacheHints,
        meta: Option<&Value>,
    ) -> ListPages {
        Self::build_with_hints(key, entries, page_size, default, meta)
    }

    fn build_with_hints(
        key: &'static str,
        entries: Vec<(String, String, Option<CacheHints>)>,
        page_size: usize,
        default: CacheHints,
        meta: Option<&Value>,
    ) -> ListPages {
        let hints = entries
            .iter()
            .filter_map(|e| e.2)
            .fold(default, CacheHints::combine);
        let mut list = ListPages {
            names: entries.iter().map(|e| e.0.clone()).collect(),
            page_size,
            items: entries.into_iter().map(|e| e.1).collect(),
            key,
            hints,
            meta: meta.cloned(),
            pages: BTreeMap::new(),
        };
        let mut start = 0;
        loop {
            let page = list.render(start);
            list.pages.insert(start, page);
            start += page_size;
            if start >= list.items.len() {
                break;
            }
        }
        list
    }

    fn render(&self, start: usize) -> String {
        let end = (start + self.page_size).min(self.items.len());
        // Items are JSON text already (a hand-written schema stays as given), so the page
        // is assembled as text, keys in a fixed order.
        let mut out = format!(
            "{{\"{}\":[{}]",
            self.key,
            self.items[start.min(end)..end].join(",")
        );
        if end < self.items.len() {
            out.push_str(&format!(
                ",\"nextCursor\":{}",
                json!(encode_cursor(&self.names[end - 1]))
            ));
        }
        out.push_str(&format!(
            ",\"resultType\":\"complete\",\"ttlMs\":{},\"cacheScope\":\"{}\"",
            self.hints.ttl_ms,
            self.hints.scope.as_str()
        ));
        if let Some(m) = &self.meta {
            out.push_str(&format!(",\"_meta\":{m}"));
        }
        out.push('}');
        out
    }

    /// The page after `cursor` (or the first page). `None` for a cursor this server did
    /// not make.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Option<std::borrow::Cow<'_, str>> {
        let start = match cursor {
            None => 0,
            Some(c) => {
                let after = decode_cursor(c)?;
                self.names.partition_point(|n| n.as_str() <= after.as_str())
            }
        };
        Some(match self.pages.get(&start) {
            Some(p) => std::borrow::Cow::Borrowed(p.as_str()),
            None => std::borrow::Cow::Owned(self.render(start)),
        })
    }
}

const CURSOR_PREFIX: &str = "after:";

/// Cursors name the last item of the previous page, so they stay valid across restarts,
/// across instances and when items are added or removed.
pub(crate) fn encode_cursor(last: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{last}"))
}

pub(crate) fn decode_cursor(cursor: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let s = String::from_utf8(bytes).ok()?;
    s.strip_prefix(CURSOR_PREFIX).map(str::to_owned)
}

pub(crate) struct ResourceEntry {
    pub(crate) def: ResourceDef,
    pub(crate) template: UriTemplate,
    pub(crate) variables: Vec<String>,
}

pub(crate) struct ServerInner {
    pub(crate) info: ServerInfo,
    pub(crate) discover: String,
    pub(crate) tools: BTreeMap<String, Arc<ToolEntry>>,
    pub(crate) tool_list: ListPages,
    pub(crate) prompts: BTreeMap<String, Arc<PromptDef>>,
    pub(crate) prompt_list: ListPages,
    /// `resources/list` entries of the fixed resources, by URI.
    pub(crate) static_resources: BTreeMap<String, Value>,
    pub(crate) statics: BTreeMap<String, Arc<ResourceEntry>>,
    /// Templates, sorted by template text.
    pub(crate) templates: Vec<Arc<ResourceEntry>>,
    pub(crate) resource_list: ListPages,
    pub(crate) template_list: ListPages,
    pub(crate) listers: Vec<resource::Lister>,
    pub(crate) has_completions: bool,
    pub(crate) read_cache: CacheHints,
    pub(crate) page_size: usize,
    pub(crate) server_meta: Option<Value>,
    pub(crate) extensions: Arc<Extensions>,
    pub(crate) result_meta: Option<Box<RawValue>>,
    pub(crate) request_timeout: Duration,
}

/// A built MCP server, independent of any transport. Cheap to clone.
///
/// Serve it with [`Server::serve_stdio`], [`Server::serve_http`], or mount
/// [`Server::router`] into an axum app.
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
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &ServerInfo {
        &self.inner.info
    }

    /// The names of the tools, in `tools/list` order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.inner.tools.keys().map(String::as_str)
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
            .field("tools", &self.inner.tools.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_foreign_values() {
        let c = encode_cursor("weather");
        assert_eq!(decode_cursor(&c).as_deref(), Some("weather"));
        assert!(decode_cursor("garbage!").is_none());
        assert!(decode_cursor("Zm9v").is_none());
    }
}

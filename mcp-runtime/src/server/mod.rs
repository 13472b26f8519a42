//! The transport-agnostic server: registry, dispatch, request context, caching, paging.

mod context;
mod dispatch;
mod result;
mod tool;
#[allow(dead_code)]
pub mod uri_template;

pub use context::{Context, Logger, Progress, State, TraceContext};
pub use result::{IntoToolResult, Json, ToolError};
pub use tool::{
    FromToolCall, Icon, Param, Signature, ToolAnnotations, ToolCall, ToolDef, valid_tool_name,
};

pub(crate) use context::NotificationSink;
pub(crate) use dispatch::{NoGuard, Prepared, Reply, TransportGuard};

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
    fn tools(this: &Arc<Self>) -> Vec<ToolDef>;
}

/// Default caching hints of `server/discover` and of list results: five minutes, public.
pub const DEFAULT_LIST_CACHE: CacheHints = CacheHints::new(300_000, CacheScope::Public);

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
    extensions: Extensions,
    page_size: usize,
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
    /// Adds the tools of a `#[mcp_runtime::server]` impl block; they share `provider`.
    pub fn provider<P: Provider>(mut self, provider: P) -> Self {
        let this = Arc::new(provider);
        self.tools.extend(P::tools(&this));
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
            if def.input_schema.get("type") != Some(&json!("object")) {
                errors.push(format!(
                    "tool `{}`: inputSchema must have \"type\": \"object\" at its root",
                    def.name
                ));
            }
            for (id, ty) in &def.required_state {
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
                    }),
                );
            }
        }
        if !errors.is_empty() {
            return Err(BuildError(errors));
        }

        let server_info = serde_json::to_value(&self.info).expect("serializable");
        let meta_value = self
            .server_info_in_meta
            .then(|| json!({ keys::SERVER_INFO: server_info }));
        let result_meta = meta_value
            .as_ref()
            .map(|m| RawValue::from_string(m.to_string()).expect("valid JSON"));

        let uses_logging = tools.values().any(|t| t.def.uses_logging);
        let mut capabilities = Map::new();
        if !tools.is_empty() {
            capabilities.insert("tools".into(), json!({}));
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

        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                discover: Value::Object(discover).to_string(),
                tools,
                tool_list,
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
    pub(crate) json: Value,
}

/// The precomputed pages of one list method.
pub(crate) struct ListPages {
    names: Vec<String>,
    page_size: usize,
    items: Vec<Value>,
    key: &'static str,
    hints: CacheHints,
    meta: Option<Value>,
    /// Result JSON of each page, by index of its first item.
    pages: BTreeMap<usize, String>,
}

impl ListPages {
    fn build(
        key: &'static str,
        entries: Vec<(String, Value, Option<CacheHints>)>,
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
        let mut r = Map::new();
        r.insert(
            self.key.into(),
            Value::Array(self.items[start.min(end)..end].to_vec()),
        );
        if end < self.items.len() {
            r.insert(
                "nextCursor".into(),
                json!(encode_cursor(&self.names[end - 1])),
            );
        }
        r.insert("resultType".into(), json!("complete"));
        r.insert("ttlMs".into(), json!(self.hints.ttl_ms));
        r.insert("cacheScope".into(), json!(self.hints.scope.as_str()));
        if let Some(m) = &self.meta {
            r.insert("_meta".into(), m.clone());
        }
        Value::Object(r).to_string()
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
fn encode_cursor(last: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{last}"))
}

fn decode_cursor(cursor: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let s = String::from_utf8(bytes).ok()?;
    s.strip_prefix(CURSOR_PREFIX).map(str::to_owned)
}

pub(crate) struct ServerInner {
    pub(crate) info: ServerInfo,
    pub(crate) discover: String,
    pub(crate) tools: BTreeMap<String, Arc<ToolEntry>>,
    pub(crate) tool_list: ListPages,
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
            extensions: Extensions::default(),
            page_size: DEFAULT_PAGE_SIZE,
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

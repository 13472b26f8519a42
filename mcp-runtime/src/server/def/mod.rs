//! Definitions: what a server serves, built by the macros or by hand. One shape for the
//! three kinds: [`Def<K>`] holds the shared item metadata (name, title, description, icons,
//! `_meta`, caching hints, completers), what the kind adds, what its extractors need, and
//! the handler.

mod call;
mod completion;
mod extract;
pub(crate) mod kind;
mod output;
pub(crate) mod plain;
pub(crate) mod prompt;
pub(crate) mod resource;
mod safe_path;
mod signature;
pub(crate) mod tool;

pub use call::{Call, Target};
pub(crate) use completion::{Completer, Suggestions};
pub use completion::{IntoCompleter, KnownArguments, MAX_COMPLETIONS};
pub use extract::{Argument, Arguments, FromRequest, HeaderValue};
pub use output::{IntoResult, Json};
pub use prompt::{GetPromptResult, PromptMessage};
pub use resource::Resource;
pub use safe_path::SafePath;
pub use signature::{DefaultValue, Param, Requirements, Signature};
pub use tool::{TaskSupport, ToolAnnotations};

use crate::Error;
use crate::protocol::CacheHints;
use futures_util::future::BoxFuture;
use kind::Kind;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A tool: its definition (as `tools/list` shows it) and its handler. `#[tool]` builds
/// these; [`ToolDef::new`](Def::<kind::Tool>::new) builds one by hand.
pub type ToolDef = Def<kind::Tool>;
/// A prompt: its definition and its handler. `#[prompt]` builds these.
pub type PromptDef = Def<kind::Prompt>;
/// A resource or resource template: its definition and its handler. `#[resource]` builds
/// these.
pub type ResourceDef = Def<kind::Resource>;

/// An icon for a tool, prompt, resource or the server (`https:` or `data:` URI).
///
/// ```
/// use mcp_runtime::{Icon, Server};
///
/// let icon = Icon::new("https://example.com/logo.png").mime_type("image/png").size("48x48").theme("light");
/// assert_eq!(serde_json::to_value(&icon).unwrap()["sizes"], serde_json::json!(["48x48"]));
/// let server = Server::builder("x", "1.0").icon(icon).build().unwrap();
/// assert_eq!(server.info().icons.len(), 1);
///
/// // Checked when the server is built, as the macros check it at compile time:
/// let bad = Server::builder("x", "1.0").icon(Icon::new("https://x/y.png").theme("blue")).build();
/// assert!(bad.unwrap_err().to_string().contains("unknown icon theme `blue`"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// The icon's URI (`https:` or `data:`).
    pub src: String,
    /// The MIME type of the icon (`mimeType`), if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes the icon is available in, such as `"48x48"` or `"any"`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// The theme the icon is for (`"light"` or `"dark"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
    /// Adds a size (`"48x48"` or `"any"`).
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }
    /// Sets the theme (`"light"` or `"dark"`).
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }
}

/// What every kind of item has: its name and how it is presented.
#[derive(Default)]
pub(crate) struct Item {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) cache: Option<CacheHints>,
    pub(crate) completers: BTreeMap<String, Completer>,
    /// Where it was defined (`crate::module::function`), for messages.
    pub(crate) origin: Option<&'static str>,
    /// The OAuth scopes a caller needs (empty: the server's default scopes).
    pub(crate) scopes: Vec<String>,
    /// Middleware around this item alone (inside the server's).
    pub(crate) layers: super::middleware::Layers,
    /// The namespaces it was mounted under, innermost first (`None`: not mounted).
    pub(crate) mounts: Option<std::sync::Arc<[String]>>,
    /// A tool's MCP App view (`ui://`), checked against the served resources.
    pub(crate) view: Option<String>,
    /// A resource served as an MCP App view.
    pub(crate) app: bool,
    /// Made from another server's listing (proxied): mounted, a tool name too long for
    /// this server's names is shortened (see `mount::name_of`), not refused; following the
    /// upstream replaces or removes only such items (see `proxy::changes::apply`).
    pub(crate) foreign: bool,
    /// The upstream that made it (`proxy::Upstream::id`), when `foreign`: following one
    /// upstream replaces or removes only its own items, not another's mounted under the
    /// same namespace.
    #[cfg(feature = "proxy")]
    pub(crate) upstream: Option<usize>,
}

impl Item {
    fn named(name: String) -> Self {
        Item {
            name,
            ..Item::default()
        }
    }
}

/// The type-erased handler of a definition.
pub(crate) type Handler<K> =
    Arc<dyn Fn(Call<K>) -> BoxFuture<'static, Result<<K as Kind>::Output, Error>> + Send + Sync>;

/// Erases a handler: its output is converted into the kind's result for the call's target.
pub(crate) fn erase<K, F, Fut, R>(handler: F) -> Handler<K>
where
    K: Kind,
    F: Fn(Call<K>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<R, Error>> + Send + 'static,
    R: IntoResult<K>,
{
    Arc::new(move |call: Call<K>| {
        let request = Arc::clone(&call.request);
        let fut = handler(call);
        Box::pin(async move {
            let target = Target::of(&request);
            fut.await?.into_result(&target)
        })
    })
}

/// A definition of kind `K` ([`ToolDef`], [`PromptDef`] or [`ResourceDef`]): the item as
/// its list shows it, plus the handler that serves it.
///
/// The setters here are shared by the three kinds; each kind adds its own (annotations
/// and schemas for tools, MIME type and list function for resources). Everything is
/// checked when the server is built, by the same rules the macros apply at compile time.
///
/// ```
/// use mcp_runtime::{Error, Icon, Server};
/// use mcp_runtime::def::ToolDef;
/// use mcp_runtime::handler::Signature;
///
/// let ping = ToolDef::new("ping", Signature::new(), |_call| async { Ok::<_, Error>("pong") })
///     .title("Ping")
///     .description("Answers pong.")
///     .icon(Icon::new("https://example.com/ping.png"))
///     .meta("com.example/team", serde_json::json!("infra"));
/// let server = Server::builder("x", "1.0").tool(ping).build().unwrap();
/// assert_eq!(server.tool_names(), ["ping"]);
///
/// // A reserved `_meta` prefix is refused at build time, like at compile time:
/// let bad = ToolDef::new("bad", Signature::new(), |_call| async { Ok::<_, Error>("") })
///     .description("Bad.")
///     .meta("io.modelcontextprotocol/x", serde_json::json!(1));
/// assert!(Server::builder("x", "1.0").tool(bad).build().is_err());
/// ```
pub struct Def<K: Kind> {
    pub(crate) item: Item,
    pub(crate) spec: K::Spec,
    pub(crate) requirements: Requirements,
    pub(crate) handler: Handler<K>,
}

impl<K: Kind> Def<K> {
    /// The item's name.
    pub fn name(&self) -> &str {
        &self.item.name
    }
    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.item.title = Some(title.into());
        self
    }
    /// Sets the description (shown to the model).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.item.description = Some(description.into());
        self
    }
    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.item.icons.push(icon);
        self
    }
    /// Adds an entry to the item's `_meta` (the key must follow the `_meta` naming rules).
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.item
            .meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }
    /// The OAuth scopes a caller needs to use the item (`#[tool(scopes("files:write"))]`),
    /// checked before the handler runs when the server has [`Auth`](crate::auth::Auth);
    /// without them the call is `403 insufficient_scope` and the item is left out of the
    /// caller's lists. Without this, the server's
    /// [`default_scopes`](crate::auth::Auth::default_scopes) apply.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.item.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// Serves the item only to clients that declare the extension `id` in their
    /// capabilities: a call from any other gets `-32021` naming it (in the legacy era, an
    /// execution error). The item stays in the lists.
    pub fn requires_extension(mut self, id: impl Into<String>) -> Self {
        let id: String = id.into();
        let inner = std::sync::Arc::clone(&self.handler);
        self.handler = std::sync::Arc::new(move |call: Call<K>| {
            if call.request.capabilities.has_extension(&id) {
                return inner(call);
            }
            let e = Error::missing_capability(
                format!("this needs the `{id}` extension, which this request did not declare"),
                serde_json::json!({ "extensions": { id.as_str(): {} } }),
            );
            Box::pin(async move { Err(e) })
        });
        self
    }
    /// Wraps this item's handler in `middleware` (inside the server's middleware; the
    /// first one set is the outermost). See [`crate::middleware`].
    ///
    /// ```
    /// use mcp_runtime::middleware::RateLimit;
    /// use mcp_runtime::{Server, tool};
    /// use std::time::Duration;
    ///
    /// /// Sends a text message (expensive: at most 5 a minute).
    /// #[tool]
    /// async fn send_sms(to: String) -> String { format!("sent to {to}") }
    ///
    /// let sms = send_sms::__mcp_tool().layer(RateLimit::new(5, Duration::from_secs(60)));
    /// let server = Server::builder("x", "1.0").tool(sms).build().unwrap();
    /// # drop(server);
    /// ```
    pub fn layer(mut self, middleware: impl super::middleware::Middleware) -> Self {
        self.item.layers.push(std::sync::Arc::new(middleware));
        self
    }
    /// Sets the item's caching hints. A list uses the shortest TTL and the most
    /// restrictive scope of its items and the server default; a resource's hints are also
    /// those of its `resources/read` results.
    pub fn cache(mut self, hints: CacheHints) -> Self {
        self.item.cache = Some(hints);
        self
    }
    /// Completes the argument (or template variable) `argument` with `completer`, for
    /// `completion/complete`. Prompts and resource templates only: a tool with a completer
    /// is refused when the server is built.
    pub fn completer<A, C: IntoCompleter<A>>(
        mut self,
        argument: impl Into<String>,
        completer: C,
    ) -> Self {
        let mut needs = Signature::new();
        C::describe(&mut needs);
        let r = needs.requirements;
        self.requirements.uses_logging |= r.uses_logging;
        self.requirements.required_state.extend(r.required_state);
        self.item
            .completers
            .insert(argument.into(), completer.into_completer());
        self
    }

    /// Completes `argument` with a completer already erased: the proxy's, which asks the
    /// upstream.
    #[cfg(feature = "proxy")]
    pub(crate) fn erased_completer(mut self, argument: String, completer: Completer) -> Self {
        self.item.completers.insert(argument, completer);
        self
    }

    /// Names where the item was defined (such as `my_server::files::list_dir`), so that
    /// build errors can point at it. The macros set it.
    pub fn origin(mut self, origin: &'static str) -> Self {
        self.item.origin = Some(origin);
        self
    }

    /// A definition whose handler is already erased.
    pub(crate) fn from_parts(
        name: String,
        spec: K::Spec,
        requirements: Requirements,
        handler: Handler<K>,
    ) -> Self {
        Def {
            item: Item::named(name),
            spec,
            requirements,
            handler,
        }
    }
}

impl<K: Kind> fmt::Debug for Def<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(&format!("Def<{}>", K::LABEL))
            .field("name", &self.item.name)
            .finish_non_exhaustive()
    }
}

/// A type whose methods are tools, resources and prompts: what `#[mcp_runtime::server]`
/// implements for an `impl` block, so they share the value's state (a pool, a client).
///
/// `#[server]` writes the impl; by hand it looks like this:
///
/// ```
/// use mcp_runtime::{Error, Server};
/// use mcp_runtime::def::{Provider, ToolDef};
/// use mcp_runtime::handler::Signature;
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
///             async move { Ok::<_, Error>(text) }
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

//! # mcp-runtime
//!
//! Write MCP servers (protocol revision **2026-07-28**) as plain `async fn`s.
//!
//! ```no_run
//! use mcp_runtime::{tool, tools, Server};
//!
//! /// Adds two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> String {
//!     (a + b).to_string()
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder("calculator", "1.0.0").tools(tools![add]).build()?;
//!     server.serve_stdio().await?;
//!     Ok(())
//! }
//! ```
//!
//! - [`macro@tool`] turns an `async fn` into a tool: parameters become the input schema,
//!   the doc comment the description. [`macro@server`] does the same for the methods of
//!   an `impl` block, so tools share state.
//! - [`macro@resource`] and [`macro@prompt`] do the same for resources (fixed URIs and
//!   RFC 6570 templates) and prompts.
//! - [`macro@needs_input`] (below `#[tool]`) asks the client for `#[input(...)]` parameters
//!   in a multi round-trip request; [`Input`] asks from straight-line code, with recorded
//!   steps that run once across rounds:
//!
//! ```no_run
//! use mcp_runtime::{Form, tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
//! struct GitHub {
//!     /// Your GitHub login
//!     login: String,
//! }
//!
//! /// Current weather for a location, personalised for the GitHub user.
//! #[tool]
//! #[needs_input]
//! async fn get_weather(location: String, #[input(elicit = "Who is asking about {location}?")] user: GitHub) -> String {
//!     format!("Sunny in {location}, @{}", user.login)
//! }
//! ```
//!
//! - [`Server`] validates every request and dispatches it; it is transport-agnostic.
//! - Transports: [`Server::serve_stdio`][serve-stdio] (newline-delimited JSON), and
//!   Streamable HTTP with [`Server::serve_http`][serve-http] or [`Server::router`][router]
//!   to mount into an axum app.
//!
//! # Features
//!
//! - `http` (default): the Streamable HTTP transport, on axum and hyper.
//! - `stdio` (default): the stdio transport.
//! - `rt-multi-thread` (default): tokio's multi-thread scheduler. A stdio-only server on a
//!   current-thread runtime can leave it out (`default-features = false,
//!   features = ["stdio"]`) and is smaller for it.
//! - `auth`: OAuth 2.1 resource server, with JWT access tokens checked against the
//!   issuer's JWKS and RFC 7662 introspection (`auth::JwtValidator`,
//!   `auth::Introspection`).
//! - `redis`: Redis back ends for what instances share (`store::redis::RedisStore`).
//! - `metrics`: request metrics in the Prometheus text format at `/metrics`.
//! - `proxy`: serving other MCP servers (on stdio or Streamable HTTP, either era)
//!   through this one.
//! - `testing`: an in-process test client, scripted input answers, list snapshots.
//! - `jsonschema`: the few schema features the built-in validator does not implement
//!   (`$dynamicRef`, `$recursiveRef`, references to an `$id` or `$anchor`).
//! - `log`: `telemetry::init` also passes on the records of crates that log through the
//!   `log` facade.
//!
#![cfg_attr(feature = "stdio", doc = "[serve-stdio]: Server::serve_stdio")]
#![cfg_attr(not(feature = "stdio"), doc = "[serve-stdio]: crate#features")]
#![cfg_attr(feature = "http", doc = "[serve-http]: Server::serve_http")]
#![cfg_attr(not(feature = "http"), doc = "[serve-http]: crate#features")]
#![cfg_attr(feature = "http", doc = "[router]: Server::router")]
#![cfg_attr(not(feature = "http"), doc = "[router]: crate#features")]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Parts of the core serve only the HTTP transport (multi-instance checks, on-demand
// streams, readiness); a stdio-only build leaves them unused.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

pub mod auth;
mod error;
pub mod mrtr;
pub mod protocol;
#[cfg(feature = "proxy")]
#[cfg_attr(docsrs, doc(cfg(feature = "proxy")))]
pub mod proxy;
mod schema;
mod server;
pub mod store;
pub mod telemetry;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
mod transport;

/// Turns an `async fn` into an MCP tool; register it with [`tools!`].
///
/// The doc comment is the description (required). Parameters are *arguments*
/// (`T: Deserialize + JsonSchema`; together they form the `inputSchema`; `Option<T>` is
/// optional) or *extractors* that read the request: [`Context`], [`Progress`], [`Logger`],
/// [`State`], [`Input`], or a type implementing [`FromRequest`](handler::FromRequest). Return text, [`Content`],
/// [`Json`] (structured output with an `outputSchema`), [`CallToolResult`], `()`, or a
/// `Result` of these with [`Error`] (an `isError: true` result).
///
/// Options: `name`, `title`, `description`, `annotations(title, read_only_hint,
/// destructive_hint, idempotent_hint, open_world_hint)`, `icon(src, mime_type, sizes,
/// theme)` (repeatable), `meta = r#"{...}"#`, `ttl_ms`, `cache_scope`. On a parameter:
/// `#[arg(name = "...", description = "...", header = "Region", default = 3)]` (`header`
/// mirrors the argument in an `Mcp-Param-Region` HTTP header; `default` fills it when the
/// call leaves it out, and shows in the schema; `default` alone takes the type's
/// `Default`). With [`needs_input`] below it,
/// `#[input(...)]` parameters are asked of the client. Every mistake is a compile error at
/// the offending token.
///
/// ```
/// use mcp_runtime::{Error, Json, Server, tool, tools};
///
/// /// Divides a by b.
/// #[tool(annotations(read_only_hint = true))]
/// async fn divide(#[arg(description = "The dividend")] a: f64, b: f64) -> Result<Json<f64>, Error> {
///     if b == 0.0 {
///         return Err(Error::new("division by zero"));
///     }
///     Ok(Json(a / b))
/// }
///
/// let server = Server::builder("calc", "1.0").tools(tools![divide]).build().unwrap();
/// assert_eq!(server.tool_names(), ["divide"]);
/// ```
pub use mcp_macros::tool;

/// Turns an `async fn` into an MCP resource (a fixed URI, listed in `resources/list`) or
/// resource template (RFC 6570 levels 1-3, listed in `resources/templates/list` and matched
/// on `resources/read`); register it with [`resources!`].
///
/// Template variables bind to the parameters of the same name, parsed into their types
/// ([`SafePath`] for paths). A `Vec<T>` takes a list: an exploded variable's items split
/// at its separator (`{/segs*}` reads `/a/b` as `["a", "b"]`, `{.ext*}` splits at `.`,
/// `{ids*}` at `,`, `{?tag*}` reads `?tag=a&tag=b` as `["a", "b"]`), another variable's
/// split at its raw `,`, before percent-decoding (`{ids}` reads `a%2Cb,c` as `["a,b", "c"]`,
/// `{/ids}` `/a,b%2Cc` as `["a", "b,c"]`, `{?ids}` `?ids=a,b%2Cc` too); a `String` takes
/// the whole value (`a,b,c`). A variable the URI leaves undefined
/// (RFC 6570 expands it to nothing: `b://` for `b://{id}`, `c://x` for `c://x{/segs*}`, a
/// query variable not given) is `None` for an `Option` and empty for a `Vec`. A value that
/// does not parse as its parameter's type, or an undefined one for another type, is
/// `-32602` Invalid params naming the variable and the type (with `data.uri`); only a URI
/// no template matches is "Resource not found". Options after the URI: `name`, `title`, `description`,
/// `mime_type`, `size`, `icon(...)`, `annotations(audience(user, assistant), priority,
/// last_modified)`, `meta`, `ttl_ms`, `cache_scope`, `list = f` (what a template can
/// produce). `#[arg(complete = f)]` on a variable serves `completion/complete`. Return text,
/// bytes, [`Json`], [`ResourceContents`], or a `Result` of these (`Err` is a JSON-RPC error).
///
/// ```
/// use mcp_runtime::{Error, Server, resource, resources};
///
/// /// One note, by id.
/// #[resource("notes://{id}", mime_type = "text/markdown")]
/// async fn note(id: u64) -> Result<String, Error> {
///     match id {
///         42 => Ok("# The answer".into()),
///         _ => Err(Error::resource_not_found(format!("notes://{id}"))),
///     }
/// }
///
/// let server = Server::builder("notes", "1.0").resources(resources![note]).build().unwrap();
/// # drop(server);
/// ```
pub use mcp_macros::resource;

/// Turns an `async fn` into an MCP prompt; register it with [`prompts!`].
///
/// Parameters are arguments (strings parsed into any `Deserialize` type, required unless
/// `Option` or given a default; `#[arg(name = "...", description = "...", complete = f,
/// default = "...")]`) or extractors.
/// Return [`PromptMessage`]s, one message, text, or a [`GetPromptResult`].
///
/// ```
/// use mcp_runtime::{PromptMessage, Server, prompt, prompts};
///
/// /// Asks the model to review a file.
/// #[prompt(title = "Review")]
/// async fn review(#[arg(description = "Path of the file")] path: String, strict: Option<bool>) -> PromptMessage {
///     PromptMessage::user(format!("Review {path} (strict: {})", strict.unwrap_or(false)))
/// }
///
/// let server = Server::builder("review", "1.0").prompts(prompts![review]).build().unwrap();
/// # drop(server);
/// ```
pub use mcp_macros::prompt;

/// Serves the `#[tool]`, `#[resource]` and `#[prompt]` methods (`&self`) of an `impl`
/// block, sharing the value's state; register the value with
/// [`ServerBuilder::provider`]. Other methods of the block are left alone.
///
/// ```
/// use mcp_runtime::{Server, server};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// #[derive(Default)]
/// struct Counter(AtomicU64);
///
/// #[server]
/// impl Counter {
///     /// Adds one and returns the count.
///     #[tool]
///     async fn bump(&self) -> String {
///         (self.0.fetch_add(1, Ordering::Relaxed) + 1).to_string()
///     }
/// }
///
/// let server = Server::builder("counter", "1.0").provider(Counter::default()).build().unwrap();
/// assert_eq!(server.tool_names(), ["bump"]);
/// ```
pub use mcp_macros::server;

/// Written below `#[tool]`, `#[prompt]` or `#[resource]`: the parameters marked
/// `#[input(...)]` are asked of the client, all in one round of a multi round-trip request
/// (`resultType: "input_required"`), and the body runs once, when every answer is there.
///
/// `#[input(elicit = "message with {placeholders}")]` asks for a form (a type deriving
/// [`Form`]; [`Elicited<T>`](Elicited) to see decline and cancel),
/// `#[input(url = "...", message = "...")]` for a URL-mode elicitation,
/// `#[input(sample = "...", max_tokens = n)]` and `#[input(roots)]` for sampling and roots;
/// `key = "..."` names the input (default: the parameter name). No import is needed:
/// the `#[tool]` (or `#[prompt]`, `#[resource]`) above reads it and removes it, so an import
/// of `needs_input` would be reported unused; written alone, without one of them above, it
/// is a compile error.
///
/// ```
/// use mcp_runtime::{Form, Server, tool, tools};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct GitHub {
///     /// Your GitHub login
///     login: String,
/// }
///
/// /// Current weather, personalised for the GitHub user.
/// #[tool]
/// #[needs_input]
/// async fn get_weather(location: String, #[input(elicit = "Who is asking about {location}?")] user: GitHub) -> String {
///     format!("Sunny in {location}, @{}", user.login)
/// }
///
/// let server = Server::builder("weather", "1.0").tools(tools![get_weather]).build().unwrap();
/// # drop(server);
/// ```
pub use mcp_macros::needs_input;

/// Derives [`ElicitForm`](mrtr::ElicitForm) for a struct whose fields are text, numbers, booleans or string
/// enums (or `Option` of these), checked field by field at compile time, so it can be asked
/// of the user with `#[input(elicit = "...")]` or [`Input::elicit`]; on a unit-only enum,
/// derives [`FormField`](mrtr::FormField). Field doc comments become the form's descriptions.
///
/// ```
/// use mcp_runtime::Form;
/// use mcp_runtime::mrtr::ElicitForm;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// #[serde(rename_all = "lowercase")]
/// enum Env { Staging, Production }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Target {
///     /// Where to deploy
///     env: Env,
///     note: Option<String>,
/// }
/// # fn check<T: ElicitForm>() {}
/// # check::<Target>();
/// ```
pub use mcp_macros::Form;

pub use error::Error;

/// Runs blocking or CPU-heavy work on tokio's blocking pool and waits for it, so the
/// runtime's workers keep serving other requests. `#[tool]` on a plain `fn` (not `async`)
/// does this for the whole body; inside an `async fn`, use it for a section. A panic in
/// `work` is an internal error (`-32603`); cancelling the request does not stop `work`
/// (it runs to its end on its thread). Nor does the end of stdin: once `serve_stdio`'s
/// drain is over, a process with such work of its requests still running exits without
/// waiting for it (tokio's runtime would wait for it when dropped, keeping the process
/// alive).
///
/// ```
/// use mcp_runtime::{Error, blocking, tool};
///
/// /// Hashes a file (CPU-bound, in a blocking section).
/// #[tool]
/// async fn checksum(text: String) -> Result<String, Error> {
///     let sum = blocking(move || text.bytes().map(u64::from).sum::<u64>()).await?;
///     Ok(sum.to_string())
/// }
///
/// /// Counts primes below `n` (CPU-bound: a plain `fn`, run on the blocking pool).
/// #[tool]
/// fn primes(n: u32) -> String {
///     (2..n).filter(|k| (2..*k).take_while(|d| d * d <= *k).all(|d| k % d != 0)).count().to_string()
/// }
/// ```
pub async fn blocking<T, F>(work: F) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    spawn_blocking_counted(work).await.map_err(|e| {
        if e.is_panic() {
            tracing::error!("blocking handler panicked");
        }
        Error::protocol(protocol::RpcError::internal(
            "Internal error: the handler panicked",
        ))
    })
}
/// `tokio::task::spawn_blocking`, counted while `work` runs (a panic included) by the
/// stdio connection whose request started it, if any: `serve_stdio` exits the process
/// after its drain only for sections of its own requests.
pub(crate) fn spawn_blocking_counted<T, F>(work: F) -> tokio::task::JoinHandle<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    #[cfg(feature = "stdio")]
    let running = transport::stdio::Section::enter();
    tokio::task::spawn_blocking(move || {
        #[cfg(feature = "stdio")]
        let _running = running;
        work()
    })
}

pub use mrtr::{Elicited, Input};
pub use protocol::{CallToolResult, Content, ResourceContents};
pub use server::context::{Context, Logger, Progress, State};
pub use server::def::{
    Arguments, GetPromptResult, Icon, Json, KnownArguments, PromptMessage, Resource, SafePath,
};
pub use server::{BuildError, Server, ServerBuilder, ServerInfo};
pub use store::Change;

/// Server settings, in groups: limits, caching, request state.
pub mod config {
    pub use crate::server::config::*;
}

/// Definitions built by hand: [`Def<K>`](def::Def) and its aliases for the three kinds,
/// [`Provider`](def::Provider) (what `#[server]` implements), tool annotations and URI
/// templates.
pub mod def {
    pub use crate::server::def::{
        Def, PromptDef, Provider, ResourceDef, TaskSupport, ToolAnnotations, ToolDef,
    };
    /// An RFC 6570 URI template (levels 1-3), as `#[resource]` templates are parsed and
    /// matched.
    ///
    /// ```
    /// use mcp_runtime::def::UriTemplate;
    ///
    /// let template = UriTemplate::parse("notes://{id}{?format}").unwrap();
    /// let vars = template.matches("notes://42?format=md").unwrap();
    /// assert_eq!(vars["id"], "42");
    /// assert_eq!(vars["format"], "md");
    /// assert!(template.matches("other://42").is_none());
    /// ```
    pub use mcp_uri_template::UriTemplate;
}

/// What a handler is made of, for custom extractors and return types and hand-written
/// handlers: [`Call<K>`](handler::Call), [`FromRequest<K>`](handler::FromRequest),
/// [`IntoResult<K>`](handler::IntoResult), [`Signature`](handler::Signature), completers.
pub mod handler {
    pub use crate::server::def::{
        Argument, Call, DefaultValue, FromRequest, HeaderValue, IntoCompleter, IntoResult,
        MAX_COMPLETIONS, Param, Requirements, Signature, Target,
    };
    pub use crate::server::trace::TraceContext;
}

/// The kinds of handlers, as type markers for [`def::Def`], [`handler::Call`],
/// [`handler::FromRequest`] and [`handler::IntoResult`].
pub mod kind {
    pub use crate::server::def::kind::{Completion, Kind, Prompt, Resource, ResourceList, Tool};
}

/// The Streamable HTTP transport: [`HttpServer`](http::HttpServer) and its defaults.
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http {
    pub use crate::transport::http::{
        DEFAULT_BODY_LIMIT, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_DRAIN, DEFAULT_HEADER_READ_TIMEOUT,
        DEFAULT_IDLE_TIMEOUT, DEFAULT_KEEP_ALIVE, DEFAULT_LAME_DUCK, DEFAULT_LIVENESS_PATH,
        DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HEADER_SIZE, DEFAULT_MAX_HEADERS,
        DEFAULT_READINESS_PATH, DEFAULT_RETRY_AFTER, DEFAULT_WRITE_STALL_TIMEOUT, HttpServer,
    };
}

/// MCP Apps (`io.modelcontextprotocol/ui`): tools with interactive views. See the module.
pub mod apps {
    #![doc = "MCP Apps (`io.modelcontextprotocol/ui`): interactive views of tools."]
    pub use crate::server::apps::{
        Csp, EXTENSION, MIME_TYPE, Permission, UiResource, Visibility, is_view_uri,
    };
}

/// Middleware around calls of tools, prompts and resources: see [`middleware::Middleware`]
/// and the module of the same name.
pub mod middleware {
    #![doc = "Middleware around calls of tools, prompts and resources."]
    pub use crate::server::middleware::{
        Cache, FromFn, Layered, MAX_RATE_BUCKETS, Middleware, Next, RateLimit, Request, Response,
        SizeLimit, Timing, from_fn,
    };
}

/// Request metrics in the Prometheus text format (the `metrics` feature): see
/// [`metrics::Metrics`].
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics {
    pub use crate::server::metrics::{DURATION_BUCKETS, Metrics};
}

/// Collects `#[tool]` functions into tool definitions (a `Vec<ToolDef>`) for
/// [`ServerBuilder::tools`]. Two tools of one list with the same name are a compile error.
///
/// The list is a constant table of the tools' constructors, called in order by one
/// function of this crate: the function that names the list stays small however long it
/// is, so build time grows with the number of tools and no faster. rustc compiles the items
/// of one module in one codegen unit, so hundreds of tools build faster on several cores
/// when they are spread over modules (`tools![files::read, files::write, ..]`): 1000 tools
/// in ten modules took 14.8 s for a release build where one module took 22.0 s (2 cores,
/// `benches/scaling.rs`).
///
/// ```
/// use mcp_runtime::{tool, tools};
///
/// /// Says hello.
/// #[tool]
/// async fn hello() -> &'static str {
///     "hello"
/// }
///
/// let defs = tools![hello];
/// assert_eq!(defs[0].name(), "hello");
/// ```
///
/// `tools![f]` on a function without `#[tool]` fails with "cannot find module or crate
/// `f`": `#[tool]` is what gives `f` its definition. A `#[resource]` or `#[prompt]` in
/// it fails saying which list it goes in, and a `#[server]` type saying it is registered
/// with `.provider(value)` (at the item, with a note where it was listed).
#[macro_export]
macro_rules! tools {
    ($($($segment:ident)::+),* $(,)?) => {{
        const __MCP_NAMES: &[&str] = &[$($($segment)::+ :: __MCP_TOOL),*];
        const _: () = $crate::__private::assert_distinct::<{ __MCP_NAMES.len() }>("tools", __MCP_NAMES);
        const __MCP_DEFS: &[fn() -> $crate::__private::ToolDef] = &[$($($segment)::+ :: __mcp_tool),*];
        $crate::__private::defs(__MCP_DEFS)
    }};
}

/// Collects `#[resource]` functions into resource definitions (a `Vec<ResourceDef>`) for
/// [`ServerBuilder::resources`], as [`tools!`] does. Two resources of one list with the
/// same URI (or URI template) are a compile error.
#[macro_export]
macro_rules! resources {
    ($($($segment:ident)::+),* $(,)?) => {{
        const __MCP_NAMES: &[&str] = &[$($($segment)::+ :: __MCP_RESOURCE),*];
        const _: () = $crate::__private::assert_distinct::<{ __MCP_NAMES.len() }>("resources", __MCP_NAMES);
        const __MCP_DEFS: &[fn() -> $crate::__private::ResourceDef] = &[$($($segment)::+ :: __mcp_resource),*];
        $crate::__private::defs(__MCP_DEFS)
    }};
}

/// Collects `#[prompt]` functions into prompt definitions (a `Vec<PromptDef>`) for
/// [`ServerBuilder::prompts`], as [`tools!`] does. Two prompts of one list with the same
/// name are a compile error.
#[macro_export]
macro_rules! prompts {
    ($($($segment:ident)::+),* $(,)?) => {{
        const __MCP_NAMES: &[&str] = &[$($($segment)::+ :: __MCP_PROMPT),*];
        const _: () = $crate::__private::assert_distinct::<{ __MCP_NAMES.len() }>("prompts", __MCP_NAMES);
        const __MCP_DEFS: &[fn() -> $crate::__private::PromptDef] = &[$($($segment)::+ :: __mcp_prompt),*];
        $crate::__private::defs(__MCP_DEFS)
    }};
}

pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What the macros expand to: the only contract between `mcp-macros` and this crate.
/// Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;

/// The README's examples, compiled as doctests so they cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

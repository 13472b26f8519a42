//! Middleware: code that runs around every call of a tool, prompt or resource, without
//! repeating it in each handler. A [`Middleware`] sees the parsed [`Request`] (method,
//! target, arguments, `_meta`, the caller), may answer it itself (short-circuit), change
//! it, or pass it on with [`Next::run`] and look at the [`Response`]. Values it
//! [`Request::insert`]s reach the handler through the [`Layered<T>`] extractor.
//!
//! Middleware set with [`ServerBuilder::layer`](crate::ServerBuilder::layer) wraps every
//! item; [`Def::layer`](crate::def::ToolDef::layer) wraps one item, inside the server's. A
//! server without middleware runs its handlers directly. Middleware runs after the
//! request was validated (headers, `_meta`, scopes, a tool's arguments against its input
//! schema), right around the handler. The wrapping is done once, when
//! the server is built (or an item is added), around the item's handler, so it applies on
//! every path that runs it: both eras, every round of a multi round-trip request (each
//! round is a call; a round that ends by asking for input does not reach the code after
//! `next.run`), and tasks.
//!
//! Completions (`completion/complete` for a prompt's argument or a template's variable)
//! do not pass through middleware: the item's scopes are checked, then its completer
//! runs. A completer that must be gated or limited (it lists values, or calls a mounted
//! upstream on each keystroke) does that itself.
//!
//! ```
//! use mcp_runtime::middleware::{Layered, Next, Request, Response, from_fn};
//! use mcp_runtime::{Server, tool, tools};
//!
//! struct Tenant {
//!     name: String,
//! }
//!
//! /// Says which tenant asked.
//! #[tool]
//! async fn tenant(t: Layered<Tenant>) -> String {
//!     t.name.clone()
//! }
//!
//! let server = Server::builder("x", "1.0")
//!     .tools(tools![tenant])
//!     .layer(from_fn(|mut req: Request, next: Next| async move {
//!         if req.arguments.get("city").and_then(|c| c.as_str()) == Some("Atlantis") {
//!             return Response::tool_error("not here");
//!         }
//!         req.insert(Tenant { name: "acme".into() });
//!         next.run(req).await
//!     }))
//!     .build()
//!     .unwrap();
//! # drop(server);
//! ```

use super::context::Extensions;
use super::def::kind::Kind;
use super::def::{Call, FromRequest, Handler, Param};
use crate::Error;
use crate::protocol::RpcError;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;

mod builtin;
pub use builtin::{Cache, MAX_RATE_BUCKETS, RateLimit, SizeLimit, Timing};

/// A call of a tool, prompt or resource, as middleware sees it.
pub struct Request {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub target: String,
    /// The arguments the handler will get (tool arguments; prompt arguments and template
    /// variables as strings: an exploded variable's items joined by its separator, and a
    /// variable the URI leaves undefined absent). Middleware may change them.
    pub arguments: Map<String, Value>,
    /// Whether the item says it only reads (a tool's `readOnlyHint`; prompts and
    /// resources always).
    pub read_only: bool,
    /// Whether the handler may ask the client for input (see [`Request::may_ask`]).
    may_ask: bool,
    /// The item's own name (see [`Request::item`]).
    item: Arc<str>,
    call: Arc<super::context::Request>,
    layered: Extensions,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("target", &self.target)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Request {
    /// The item served: the tool's or prompt's name, or the resource's URI, or the URI
    /// template for a template's resources (one item whatever URI of it is read;
    /// [`Request::target`] has the URI read).
    pub fn item(&self) -> &str {
        &self.item
    }
    /// The caller, when the transport authenticated the request.
    pub fn principal(&self) -> Option<&crate::auth::Principal> {
        self.call.principal.as_deref()
    }
    /// The principal key (issuer and subject) rate limits and caches are keyed by;
    /// `None` without authorization.
    pub fn caller_key(&self) -> Option<String> {
        self.principal().map(crate::auth::Principal::key)
    }
    /// The request's `_meta`.
    pub fn meta(&self) -> &Map<String, Value> {
        &self.call.meta
    }
    /// The request's context (capabilities, client info, progress, cancellation).
    pub fn context(&self) -> crate::Context {
        crate::Context(Arc::clone(&self.call))
    }
    /// Whether the handler may ask the client for input (`#[needs_input]`, an `Input`
    /// parameter, a proxied item): its result then depends on answers that are not among
    /// the arguments, so it is no result to reuse for another call ([`Cache`] does not).
    pub fn may_ask(&self) -> bool {
        self.may_ask
    }
    /// Which round of a multi round-trip request this is (1 for the first, and for
    /// requests that do not ask).
    pub fn round(&self) -> u32 {
        self.call.input.as_ref().map_or(1, |i| i.round().max(1))
    }
    /// Hands `value` to the handler, which reads it with [`Layered<T>`].
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.layered.insert(value);
    }
    /// A value an outer middleware inserted.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.layered.get::<T>()
    }
}

/// How a call ended, as middleware sees it: the method's result as JSON (for a tool,
/// a `CallToolResult`, which may be an `isError` one), or a JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// The result.
    Result(Value),
    /// A JSON-RPC error.
    Error(RpcError),
}

impl Response {
    /// A tool's execution error (`isError: true` with this text): what the model reads.
    /// From a prompt or resource it becomes a JSON-RPC error `-32603` with the text.
    pub fn tool_error(message: impl Into<String>) -> Response {
        Response::Result(json!({
            "content": [{"type": "text", "text": message.into()}],
            "isError": true,
        }))
    }
    /// A JSON-RPC error.
    pub fn error(error: RpcError) -> Response {
        Response::Error(error)
    }
    /// Whether it is an error: a JSON-RPC one, or a tool's `isError` result.
    pub fn is_error(&self) -> bool {
        match self {
            Response::Error(_) => true,
            Response::Result(v) => v.get("isError") == Some(&Value::Bool(true)),
        }
    }
    /// The size of the result as JSON, in bytes (0 for an error).
    pub fn size(&self) -> usize {
        match self {
            Response::Error(_) => 0,
            Response::Result(v) => serde_json::to_vec(v).map_or(0, |b| b.len()),
        }
    }
}

/// The rest of the chain: the next middleware, or the handler.
pub struct Next {
    run: Box<dyn FnOnce(Request) -> BoxFuture<'static, Response> + Send>,
}

impl Next {
    /// Passes the request on.
    pub async fn run(self, request: Request) -> Response {
        (self.run)(request).await
    }
}

/// Code around calls. Implement it, or make one from an `async` closure with
/// [`from_fn`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a middleware",
    label = "not a middleware",
    note = "a middleware implements `mcp_runtime::middleware::Middleware` (such as `Timing`, `RateLimit`, `SizeLimit`, `Cache`); make one from an async closure with `mcp_runtime::middleware::from_fn`"
)]
pub trait Middleware: Send + Sync + 'static {
    /// Handles one call: answer it, or pass it on with `next.run(request)`.
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response>;

    /// Told that the contents of the resource `uri` (as clients read it) changed: the
    /// server announced `notifications/resources/updated` for it, on this instance or,
    /// through a shared notification bus, on another. A middleware that keeps results
    /// forgets that resource's ([`Cache`] does). Called for the server's middleware
    /// (`ServerBuilder::layer` of the server built, and of every builder mounted or merged
    /// into it), before listeners hear of it, with the URI as this server serves it (a
    /// mounted child's middleware sees that URI as its requests' `target` too); an item's
    /// own middleware (`Def::layer`) is not told. Nothing by default.
    fn resource_updated(&self, uri: &str) {
        let _ = uri;
    }

    /// What puts middleware around handlers: named here (in every middleware's vtable),
    /// so that a server without middleware does not link it. Not to be overridden.
    #[doc(hidden)]
    fn __wrappers(&self) -> &'static Wrappers {
        &WRAPPERS
    }
}

impl<M: Middleware + ?Sized> Middleware for Arc<M> {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        (**self).call(request, next)
    }
    fn resource_updated(&self, uri: &str) {
        (**self).resource_updated(uri);
    }
    fn __wrappers(&self) -> &'static Wrappers {
        (**self).__wrappers()
    }
}

/// What puts a list of middleware around a handler, one function per kind of item
/// ([`Middleware::__wrappers`]): the code that runs middleware, with the conversion of
/// results to JSON and back, is reached only through a middleware.
#[doc(hidden)]
pub struct Wrappers {
    pub(crate) tool: WrapFn<super::def::kind::Tool>,
    pub(crate) prompt: WrapFn<super::def::kind::Prompt>,
    pub(crate) resource: WrapFn<super::def::kind::Resource>,
}

/// [`wrap`]'s shape.
#[doc(hidden)]
pub type WrapFn<K> = fn(Handler<K>, Layers, bool, bool, Arc<str>) -> Handler<K>;

/// The one [`Wrappers`].
static WRAPPERS: Wrappers = Wrappers {
    tool: wrap,
    prompt: wrap,
    resource: wrap,
};

/// A middleware from an `async` function of the request and the rest of the chain.
pub fn from_fn<F, Fut>(f: F) -> FromFn<F>
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    FromFn(f)
}

/// See [`from_fn`].
pub struct FromFn<F>(F);

impl<F, Fut> Middleware for FromFn<F>
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        (self.0)(request, next).boxed()
    }
}

/// A value a middleware inserted into the request ([`Request::insert`]), as a handler
/// parameter. A request without one fails with `-32603` naming the type.
pub struct Layered<T>(pub Arc<T>);

impl<T> std::ops::Deref for Layered<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<K: Kind, T: Send + Sync + 'static> FromRequest<K> for Layered<T> {
    fn describe(_: &super::def::Param, signature: &mut super::def::Signature) {
        signature.requirements().requires_layered::<T>();
    }
    fn from_request(call: &mut Call<K>, _: &Param) -> Result<Self, Error> {
        let layered = call
            .request
            .layered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        layered
            .and_then(|l| l.get::<T>())
            .map(Layered)
            .ok_or_else(|| {
                Error::protocol(RpcError::internal(format!(
                    "Internal error: no middleware provided a `{}`",
                    std::any::type_name::<T>()
                )))
            })
    }
}

/// A list of middleware, outermost first.
#[doc(hidden)]
pub type Layers = Vec<Arc<dyn Middleware>>;

/// `def` with the server's `layers` and its own around its handler.
pub(crate) fn layered<K: Kind>(
    mut def: super::def::Def<K>,
    server: &Layers,
    read_only: bool,
) -> super::def::Def<K> {
    let own = std::mem::take(&mut def.item.layers);
    let all: Layers = server.iter().cloned().chain(own).collect();
    // With middleware around it, a `Layered<T>` may be provided (which value a middleware
    // inserts is known only when it runs); without, it cannot, and building says so.
    if !all.is_empty() {
        def.requirements.required_layered.clear();
    }
    // Asked of the middleware itself (`**m`), through its vtable: `Arc`'s own impl would
    // name the wrappers here, for every server.
    let Some(wrap) = all.first().and_then(|m| K::wrapper((**m).__wrappers())) else {
        return def;
    };
    let item: Arc<str> = K::identity(&def.item.name, &def.spec).into();
    let may_ask = def.requirements.input.is_some();
    def.handler = wrap(Arc::clone(&def.handler), all, read_only, may_ask, item);
    def
}

/// A tool with the server's `layers` and its own around its handler.
pub(crate) fn layered_tool(def: super::def::ToolDef, server: &Layers) -> super::def::ToolDef {
    let read_only = def.spec.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
    layered(def, server, read_only)
}

/// `handler` with `layers` around it (itself when there are none).
fn wrap<K: Kind>(
    handler: Handler<K>,
    layers: Layers,
    read_only: bool,
    may_ask: bool,
    item: Arc<str>,
) -> Handler<K> {
    if layers.is_empty() {
        return handler;
    }
    let layers: Arc<[Arc<dyn Middleware>]> = layers.into();
    Arc::new(move |mut call: Call<K>| {
        let (handler, layers) = (Arc::clone(&handler), Arc::clone(&layers));
        let item = Arc::clone(&item);
        Box::pin(async move {
            let shared = Arc::clone(&call.request);
            // Inside another set of layers (a mounted child's, inside its parent's), the
            // values the outer ones inserted; the inner ones add to them.
            let outer = shared
                .layered
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let layered = outer.map_or_else(Extensions::default, |l| Extensions::clone(&l));
            let request = Request {
                method: K::METHOD,
                target: shared.target.clone().unwrap_or_default(),
                arguments: std::mem::take(&mut call.arguments),
                read_only,
                may_ask,
                item,
                call: shared,
                layered,
            };
            let response = chain(layers, 0, handler, call, request).await;
            match response {
                // A tool's error answered for a prompt or resource: its text as `-32603`.
                Response::Result(v) if K::METHOD != "tools/call" && is_tool_error(&v) => {
                    Err(Error::protocol(RpcError::internal(tool_error_text(&v))))
                }
                Response::Result(v) => K::from_json(v).map_err(Error::protocol),
                Response::Error(e) => Err(Error::protocol(e)),
            }
        })
    })
}

/// Whether `v` is a tool's `isError` result ([`Response::tool_error`]'s shape).
fn is_tool_error(v: &Value) -> bool {
    v.get("isError") == Some(&Value::Bool(true)) && v.get("content").is_some_and(Value::is_array)
}

/// The texts of a tool's error result, one per line.
fn tool_error_text(v: &Value) -> String {
    let texts: Vec<&str> = v["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

/// Runs `layers[i..]` and then the handler.
fn chain<K: Kind>(
    layers: Arc<[Arc<dyn Middleware>]>,
    i: usize,
    handler: Handler<K>,
    call: Call<K>,
    request: Request,
) -> BoxFuture<'static, Response> {
    let Some(layer) = layers.get(i).cloned() else {
        return innermost(handler, call, request);
    };
    let next = Next {
        run: Box::new(move |request| chain(layers, i + 1, handler, call, request)),
    };
    layer.call(request, next)
}

/// The handler, with the arguments and values the middleware left.
fn innermost<K: Kind>(
    handler: Handler<K>,
    mut call: Call<K>,
    request: Request,
) -> BoxFuture<'static, Response> {
    call.arguments = request.arguments;
    *call
        .request
        .layered
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(request.layered));
    let target = request.target;
    Box::pin(async move {
        match handler(call).await {
            Ok(out) => K::to_json(out).map_or_else(Response::Error, Response::Result),
            Err(e) => match super::pipeline::settle::<K>(Err(e), &target, false) {
                super::pipeline::Outcome::Complete(out) => {
                    K::to_json(out).map_or_else(Response::Error, Response::Result)
                }
                super::pipeline::Outcome::Failed(r) => Response::Error(r.error),
                _ => Response::Error(RpcError::internal("Internal error")),
            },
        }
    })
}

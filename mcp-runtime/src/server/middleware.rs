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
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
}

impl<M: Middleware + ?Sized> Middleware for Arc<M> {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        (**self).call(request, next)
    }
    fn resource_updated(&self, uri: &str) {
        (**self).resource_updated(uri);
    }
}

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
pub(crate) type Layers = Vec<Arc<dyn Middleware>>;

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
    let item: Arc<str> = K::identity(&def.item.name, &def.spec).into();
    let may_ask = def.requirements.uses_input;
    def.handler = wrap(Arc::clone(&def.handler), all, read_only, may_ask, item);
    def
}

/// A tool with the server's `layers` and its own around its handler.
pub(crate) fn layered_tool(def: super::def::ToolDef, server: &Layers) -> super::def::ToolDef {
    let read_only = def.spec.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
    layered(def, server, read_only)
}

/// `handler` with `layers` around it (itself when there are none).
pub(crate) fn wrap<K: Kind>(
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

// ------------------------------------------------------------------ shipped middleware

/// Logs each call (`info`, target `mcp_runtime::middleware`): method, target, round,
/// how it ended and how long it took.
#[derive(Debug, Clone, Default)]
pub struct Timing;

impl Middleware for Timing {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        Box::pin(async move {
            let (method, target, round) = (request.method, request.target.clone(), request.round());
            let started = Instant::now();
            let response = next.run(request).await;
            tracing::info!(
                method,
                target = %target,
                round,
                error = response.is_error(),
                elapsed_us = started.elapsed().as_micros() as u64,
                "call"
            );
            response
        })
    }
}

/// Refuses calls past `n` per `per`, per caller (and per item with
/// [`RateLimit::per_item`]: per tool, prompt, resource or resource template, not per
/// URI read, which the client chooses): a token bucket that refills continuously, so a caller who
/// tripped it can call again as soon as a token is back. A refused tool call is an
/// `isError` result saying when to retry (what the model reads); a prompt or resource
/// gets `-32603` with the same text. Without authorization every caller is one.
pub struct RateLimit {
    capacity: f64,
    per_second: f64,
    per_item: bool,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

/// Most buckets a [`RateLimit`] keeps: past it, full buckets are forgotten first, then
/// the least recently used quarter.
pub const MAX_RATE_BUCKETS: usize = 100_000;

impl RateLimit {
    /// At most `n` calls per `per`, per caller.
    pub fn new(n: u32, per: Duration) -> RateLimit {
        let n = f64::from(n.max(1));
        RateLimit {
            capacity: n,
            per_second: n / per.as_secs_f64().max(1e-6),
            per_item: false,
            buckets: Mutex::new(HashMap::new()),
        }
    }
    /// Counts each tool, prompt or resource apart.
    pub fn per_item(mut self) -> RateLimit {
        self.per_item = true;
        self
    }

    /// Takes a token for `key`; `Err(wait)` when there is none.
    fn take(&self, key: String) -> Result<(), Duration> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_RATE_BUCKETS && !buckets.contains_key(&key) {
            // Full buckets have nothing to remember; forget those first.
            let (cap, rate) = (self.capacity, self.per_second);
            buckets.retain(|_, (t, at)| *t + now.duration_since(*at).as_secs_f64() * rate < cap);
            if buckets.len() >= MAX_RATE_BUCKETS {
                // Still full: the least recently used quarter goes (once per that many
                // new keys, so the sort is paid rarely).
                let mut ages: Vec<Instant> = buckets.values().map(|(_, at)| *at).collect();
                let quarter = ages.len() / 4;
                let (_, cutoff, _) = ages.select_nth_unstable(quarter);
                let cutoff = *cutoff;
                buckets.retain(|_, (_, at)| *at > cutoff);
            }
        }
        let (tokens, at) = buckets.entry(key).or_insert((self.capacity, now));
        *tokens =
            (*tokens + now.duration_since(*at).as_secs_f64() * self.per_second).min(self.capacity);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / self.per_second))
        }
    }
}

impl Middleware for RateLimit {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        let mut key = request.caller_key().unwrap_or_default();
        if self.per_item {
            key.push('\0');
            key.push_str(request.method);
            key.push('\0');
            key.push_str(request.item());
        }
        match self.take(key) {
            Ok(()) => Box::pin(next.run(request)),
            Err(wait) => {
                let message = format!(
                    "Rate limit exceeded: retry in {:.1} s",
                    wait.as_secs_f64().max(0.1)
                );
                tracing::debug!(target = %request.target, "rate limited");
                let response = if request.method == crate::protocol::methods::TOOLS_CALL {
                    Response::tool_error(message)
                } else {
                    Response::Error(RpcError::internal(message))
                };
                Box::pin(async move { response })
            }
        }
    }
}

/// Replaces a result larger than `max` bytes (as JSON) by an error that says so: a tool
/// gets an `isError` result, a prompt or resource `-32603`. Keeps one oversized answer
/// from reaching a client (or a model's context).
#[derive(Debug, Clone)]
pub struct SizeLimit {
    max: usize,
}

impl SizeLimit {
    /// Results up to `max` bytes pass.
    pub fn new(max: usize) -> SizeLimit {
        SizeLimit { max }
    }
}

impl Middleware for SizeLimit {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        let max = self.max;
        let tool = request.method == crate::protocol::methods::TOOLS_CALL;
        Box::pin(async move {
            let response = next.run(request).await;
            let size = response.size();
            if size <= max {
                return response;
            }
            let message = format!("The result is {size} bytes, over the limit of {max}");
            tracing::warn!(size, max, "result over the size limit");
            if tool {
                Response::tool_error(message)
            } else {
                Response::Error(RpcError::internal(message))
            }
        })
    }
}

/// Caches the results of read-only calls (tools with `readOnlyHint`, prompts and
/// resources) by item, arguments (canonical: key order does not matter) and caller, for
/// `ttl`; errors are not cached. At most `max` entries (default 10 000; the oldest go
/// first).
///
/// A handler that may ask the client for input ([`Request::may_ask`]) is never cached:
/// its result depends on the answers. Nor is anything else that is not the arguments or
/// the caller in the key: a handler whose result depends on the client (its info, its
/// `_meta`) is no candidate. When the server announces `notifications/resources/updated`
/// for a resource, a `Cache` among the server's middleware forgets that resource's
/// reads ([`Middleware::resource_updated`]); one on an item keeps them until `ttl`.
pub struct Cache {
    ttl: Duration,
    max: usize,
    entries: Arc<Mutex<Entries>>,
}

/// What a [`Cache`] holds, behind one lock: results by key, and resource updates by URI.
#[derive(Default)]
struct Entries {
    results: HashMap<String, (Instant, Value)>,
    /// Updates announced so far, by URI: a read that began before one of its resource
    /// does not keep what it read (it may be the old contents).
    updates: HashMap<String, u64>,
    /// Bumped when `updates` is emptied (it grew past the cache's size), so a read that
    /// began before still sees a change.
    epoch: u64,
}

impl Entries {
    /// Where updates of `uri` stand.
    fn updated(&self, uri: &str) -> (u64, u64) {
        (self.epoch, self.updates.get(uri).copied().unwrap_or(0))
    }
}

impl Cache {
    /// Keeps results for `ttl`.
    pub fn new(ttl: Duration) -> Cache {
        Cache {
            ttl,
            max: 10_000,
            entries: Arc::default(),
        }
    }
    /// Keeps at most `max` results.
    pub fn max_entries(mut self, max: usize) -> Cache {
        self.max = max.max(1);
        self
    }
}

impl Middleware for Cache {
    fn resource_updated(&self, uri: &str) {
        let prefix = format!("{}\0{uri}\0", crate::protocol::methods::RESOURCES_READ);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.updates.len() >= self.max && !entries.updates.contains_key(uri) {
            entries.updates.clear();
            entries.epoch += 1;
        }
        *entries.updates.entry(uri.to_owned()).or_default() += 1;
        entries.results.retain(|key, _| !key.starts_with(&prefix));
    }

    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        if !request.read_only || request.may_ask() {
            return Box::pin(next.run(request));
        }
        let key = format!(
            "{}\0{}\0{}\0{}",
            request.method,
            request.target,
            request.caller_key().unwrap_or_default(),
            crate::mrtr::state::digest(&Value::Object(request.arguments.clone()))
        );
        let now = Instant::now();
        // A read's resource, whose updates it watches while it runs.
        let read = (request.method == crate::protocol::methods::RESOURCES_READ)
            .then(|| request.target.clone());
        let before = {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, v)) = entries.results.get(&key)
                && now.duration_since(*at) < self.ttl
            {
                let hit = Response::Result(v.clone());
                return Box::pin(async move { hit });
            }
            read.as_deref().map(|uri| entries.updated(uri))
        };
        let entries = Arc::clone(&self.entries);
        let (ttl, max) = (self.ttl, self.max);
        Box::pin(async move {
            let response = next.run(request).await;
            if let Response::Result(v) = &response
                && !response.is_error()
            {
                let mut guard = entries.lock().unwrap_or_else(|e| e.into_inner());
                // Its resource updated while it read: what it read may be the old
                // contents, so it is not kept (the next read reads again).
                if read.as_deref().map(|uri| guard.updated(uri)) != before {
                    return response;
                }
                let entries = &mut guard.results;
                if entries.len() >= max {
                    entries.retain(|_, (at, _)| at.elapsed() < ttl);
                    if entries.len() >= max
                        && let Some(oldest) = entries
                            .iter()
                            .min_by_key(|(_, (at, _))| *at)
                            .map(|(k, _)| k.clone())
                    {
                        entries.remove(&oldest);
                    }
                }
                entries.insert(key, (Instant::now(), v.clone()));
            }
            response
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_buckets_stay_bounded() {
        let limit = RateLimit::new(5, Duration::from_secs(3600));
        for i in 0..MAX_RATE_BUCKETS + 10 {
            // Each key takes a token: none of these buckets is full, none can be
            // forgotten as full.
            assert!(limit.take(format!("k{i}")).is_ok());
        }
        let held = limit.buckets.lock().unwrap().len();
        assert!(held <= MAX_RATE_BUCKETS, "{held}");
        assert!(held >= MAX_RATE_BUCKETS / 2, "{held}");
        // The most recent keys are still counted.
        let last = format!("k{}", MAX_RATE_BUCKETS + 9);
        for _ in 0..4 {
            assert!(limit.take(last.clone()).is_ok());
        }
        assert!(limit.take(last).is_err());
    }
}

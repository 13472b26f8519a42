//! Streamable HTTP (2026-07-28): one POST endpoint; JSON responses, or SSE when the request
//! streams notifications; header, Host/Origin, size and media-type rules.

mod auth;
mod conn;
mod headers;
mod legacy;
mod origin;
mod sse;

pub(crate) use headers::HeaderGuard;

use crate::protocol::{RpcError, json::parse_strict};
use crate::server::Server;
use crate::server::parts::Streams;
use crate::server::reply::{ErrorClass, Rejection, Reply};
use crate::server::route::Prepared;
use crate::server::slot::Slot;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::BodyExt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::mpsc;

/// Default request body limit (4 MiB).
pub const DEFAULT_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// How often an idle listen stream gets an SSE comment line.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long open connections may finish after shutdown begins.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(30);

/// How long a connection may stay silent while none of its requests is being served
/// (first byte, keep-alive idle, slow header bytes).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request's headers may take, from the first byte.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request's body may take once its headers arrived.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a response write may make no progress (a client that stopped reading) before
/// the connection is closed.
pub const DEFAULT_WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Default cap on open connections; past it, new connections wait in the listen backlog.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// The `Retry-After` (seconds) of a 503.
pub const DEFAULT_RETRY_AFTER: u64 = 1;

/// Settings of the HTTP transport, set through the methods of [`HttpServer`].
#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    path: String,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Vec<String>,
    body_limit: usize,
    idle_timeout: Duration,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    write_stall_timeout: Duration,
    max_connections: usize,
    retry_after: u64,
    drain: Duration,
    keep_alive: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: Some(Vec::new()),
            allowed_origins: Vec::new(),
            body_limit: DEFAULT_BODY_LIMIT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            write_stall_timeout: DEFAULT_WRITE_STALL_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            retry_after: DEFAULT_RETRY_AFTER,
            drain: DEFAULT_DRAIN,
            keep_alive: DEFAULT_KEEP_ALIVE,
        }
    }
}

/// A server with its HTTP settings: mount it with [`HttpServer::into_router`] or run it
/// with [`HttpServer::serve`].
///
/// ```
/// use mcp_runtime::Server;
///
/// let server = Server::builder("x", "1.0").build().unwrap();
/// let router = server.http().path("/api/mcp").body_limit(1 << 20).into_router();
/// # drop(router);
/// ```
///
/// By default the endpoint is `/mcp`, only loopback `Host` values are accepted (DNS
/// rebinding protection) and only loopback `Origin`s; requests without `Origin` (non-browser
/// clients) pass.
///
/// ```no_run
/// # async fn run(server: mcp_runtime::Server) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// server
///     .http()
///     .path("/mcp")
///     .allow_origin("https://app.example.com")
///     .serve(listener, async { tokio::signal::ctrl_c().await.ok(); })
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct HttpServer {
    server: Server,
    config: HttpConfig,
    /// The legacy era's sessions.
    sessions: Arc<legacy::Sessions>,
}

impl Server {
    /// HTTP settings for this server (see [`HttpServer`]).
    pub fn http(self) -> HttpServer {
        let l = &self.inner.legacy;
        let sessions = Arc::new(legacy::Sessions::new(l.max_sessions, l.idle_timeout));
        HttpServer {
            server: self,
            config: HttpConfig::default(),
            sessions,
        }
    }

    /// An axum [`Router`] serving this server at `/mcp` with default settings, to nest
    /// into an existing app (with your own tower layers).
    pub fn router(&self) -> Router {
        self.clone().http().into_router()
    }

    /// Binds `addr` and serves at `/mcp` until SIGINT/SIGTERM, then drains. Logs go
    /// wherever the application's `tracing` subscriber sends them (see
    /// [`telemetry::init`](crate::telemetry::init)).
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.http()
            .serve(listener, crate::transport::shutdown_signal())
            .await
    }
}

impl HttpServer {
    /// The endpoint path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let mut p = path.into();
        if !p.starts_with('/') {
            p.insert(0, '/');
        }
        self.config.path = p;
        self
    }
    /// Also accepts this `Host` (a host name, with or without port). Loopback names are
    /// always accepted.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        if let Some(h) = &mut self.config.allowed_hosts {
            h.push(host.into().to_ascii_lowercase());
        }
        self
    }
    /// Accepts any `Host` (turns DNS rebinding protection off: only for servers behind a
    /// proxy that checks it).
    pub fn allow_any_host(mut self) -> Self {
        self.config.allowed_hosts = None;
        self
    }
    /// Also accepts this `Origin` (`scheme://host[:port]`). Loopback origins are always
    /// accepted.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.config
            .allowed_origins
            .push(origin.into().trim_end_matches('/').to_ascii_lowercase());
        self
    }
    /// The largest accepted request body (default [`DEFAULT_BODY_LIMIT`]).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }
    /// How long open connections may finish after shutdown begins (default
    /// [`DEFAULT_DRAIN`]).
    pub fn drain_timeout(mut self, d: Duration) -> Self {
        self.config.drain = d;
        self
    }

    /// How long a connection may stay silent while none of its requests is being served:
    /// before the first byte, between keep-alive requests, between header bytes (default
    /// [`DEFAULT_IDLE_TIMEOUT`]). Applies to [`HttpServer::serve`].
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.config.idle_timeout = d;
        self
    }
    /// How long a request's headers may take (default [`DEFAULT_HEADER_READ_TIMEOUT`]).
    /// Applies to [`HttpServer::serve`].
    pub fn header_read_timeout(mut self, d: Duration) -> Self {
        self.config.header_read_timeout = d;
        self
    }
    /// How long a request's body may take to arrive (default
    /// [`DEFAULT_BODY_READ_TIMEOUT`]); past it, 408.
    pub fn body_read_timeout(mut self, d: Duration) -> Self {
        self.config.body_read_timeout = d;
        self
    }
    /// How long a response write may make no progress before the connection is closed
    /// (default [`DEFAULT_WRITE_STALL_TIMEOUT`]): what a client that stops reading can pin
    /// is freed. Applies to [`HttpServer::serve`].
    pub fn write_stall_timeout(mut self, d: Duration) -> Self {
        self.config.write_stall_timeout = d;
        self
    }
    /// The most open connections (default [`DEFAULT_MAX_CONNECTIONS`]); more wait in the
    /// listen backlog. Applies to [`HttpServer::serve`].
    pub fn max_connections(mut self, n: usize) -> Self {
        self.config.max_connections = n.max(1);
        self
    }
    /// The `Retry-After` seconds of a 503 (default [`DEFAULT_RETRY_AFTER`]).
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.config.retry_after = secs;
        self
    }

    /// How often an idle `subscriptions/listen` stream gets an SSE comment line (default
    /// [`DEFAULT_KEEP_ALIVE`]).
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.config.keep_alive = every;
        self
    }

    /// The axum router: POST on the path; GET and DELETE serve legacy sessions (405
    /// otherwise).
    ///
    /// With [`Auth`](crate::auth::Auth), it also serves the protected-resource metadata at
    /// its well-known paths (see [`HttpServer::metadata_router`]).
    pub fn into_router(self) -> Router {
        let path = self.config.path.clone();
        let metadata = self.metadata_router();
        let shared = Arc::new(self);
        Router::new()
            .route(
                &path,
                post(handle_post)
                    .get(handle_get_or_delete)
                    .delete(handle_get_or_delete),
            )
            .with_state(shared)
            .merge(metadata)
    }

    /// The RFC 9728 protected-resource metadata of a server with
    /// [`Auth`](crate::auth::Auth), at `/.well-known/oauth-protected-resource` followed by
    /// the path of its resource URI, and at the bare well-known path (an empty router
    /// without authorization). [`HttpServer::into_router`] includes it; when you nest the
    /// MCP router under a prefix of your app, merge this one at the root of the app, since
    /// clients look for it at the root of the host.
    pub fn metadata_router(&self) -> Router {
        let Some(auth) = self.server.inner.settings.auth.clone() else {
            return Router::new();
        };
        let doc = move || {
            let auth = Arc::clone(&auth);
            async move { auth::metadata(&auth) }
        };
        let mut router =
            Router::new().route("/.well-known/oauth-protected-resource", get(doc.clone()));
        let suffixed = self
            .server
            .inner
            .settings
            .auth
            .as_ref()
            .map(|a| a.metadata_path())
            .filter(|p| p != "/.well-known/oauth-protected-resource");
        if let Some(p) = suffixed {
            router = router.route(&p, get(doc));
        }
        router
    }

    /// Serves connections from `listener` until `shutdown` completes, then stops accepting
    /// and gives open connections the drain timeout to finish.
    ///
    /// Each connection gets the idle, header-read and write-stall deadlines (which
    /// `axum::serve` does not set); at most `max_connections` are open at once.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
        use hyper_util::server::graceful::GracefulShutdown;
        use hyper_util::service::TowerToHyperService;

        self.server
            .check_multi_instance()
            .map_err(io::Error::other)?;
        let local = listener.local_addr()?;
        let drain = self.config.drain;
        let server = self.server.clone();
        let sessions = Arc::clone(&self.sessions);
        let cfg = self.config.clone();
        let router = self.into_router();
        let graceful = GracefulShutdown::new();
        let mut builder = hyper::server::conn::http1::Builder::new();
        // hyper's header timer starts when it waits for a request, so it covers the idle
        // time too: the idle deadline (ours) and the header deadline add up.
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(cfg.idle_timeout + cfg.header_read_timeout)
            .keep_alive(true);
        let connections = Arc::new(tokio::sync::Semaphore::new(cfg.max_connections));
        let _ = TokioExecutor::new();
        tracing::info!("serving MCP on http://{local}/mcp");
        tokio::pin!(shutdown);
        loop {
            // At the cap, stop accepting: new connections wait in the backlog.
            let permit = tokio::select! {
                p = Arc::clone(&connections).acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => break,
                },
                () = &mut shutdown => break,
            };
            let (stream, peer): (tokio::net::TcpStream, SocketAddr) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of descriptors and the like: back off instead of spinning.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let _ = stream.set_nodelay(true);
            // The connection is busy while one of its requests is served (until its response
            // is fully sent); silence is then expected, and the idle deadline sleeps.
            let busy = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let counted = Arc::clone(&busy);
            let router = router.clone();
            let service = tower::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let held = Slot::enter(&counted);
                let mut router = router.clone();
                async move {
                    let resp = tower::Service::call(&mut router, req).await?;
                    Ok::<_, std::convert::Infallible>(resp.map(|b| conn::holding(b, vec![held])))
                }
            });
            let io = conn::Deadlines::new(stream, cfg.idle_timeout, cfg.write_stall_timeout, busy);
            let conn =
                builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
            let conn = graceful.watch(conn);
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(%peer, "connection ended: {e}");
                }
                drop(permit);
            });
        }
        drop(listener);
        tracing::info!("shutting down; draining open connections");
        // Listen streams end with their result, so their connections can close.
        server.close_subscriptions();
        sessions.close_all();
        if tokio::time::timeout(drain, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("connections still open after {drain:?}; closing");
        }
        Ok(())
    }
}

/// The HTTP status of a reply: fixed by the spec for the classes that have one, 200 for
/// errors of requests that were understood (the body carries the JSON-RPC error).
fn status_of(error: Option<ErrorClass>) -> StatusCode {
    match error {
        None | Some(ErrorClass::Failed) => StatusCode::OK,
        Some(
            ErrorClass::Malformed
            | ErrorClass::Header
            | ErrorClass::Meta
            | ErrorClass::Version
            | ErrorClass::Capability,
        ) => StatusCode::BAD_REQUEST,
        Some(ErrorClass::UnknownMethod) => StatusCode::NOT_FOUND,
        Some(ErrorClass::Busy) => StatusCode::SERVICE_UNAVAILABLE,
        Some(ErrorClass::Forbidden) => StatusCode::FORBIDDEN,
    }
}

fn json_reply(r: Reply) -> Response {
    let status = status_of(r.error);
    let needs = scopes_needed(&r);
    let mut resp = (status, [(header::CONTENT_TYPE, "application/json")], r.body).into_response();
    if let Some(n) = needs {
        resp.extensions_mut().insert(n);
    }
    resp
}

/// The scopes a call refused for its scopes needed (for the `403` challenge).
fn scopes_needed(r: &Reply) -> Option<auth::NeedsScopes> {
    if r.error != Some(ErrorClass::Forbidden) {
        return None;
    }
    let data = r.rpc.as_ref()?.1.data()?;
    let scopes = data.get("requiredScopes")?.as_array()?;
    Some(auth::NeedsScopes(
        scopes
            .iter()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect(),
    ))
}

/// The 403 answer to a failed Host/Origin check.
fn forbidden(why: &str) -> Response {
    refuse(
        StatusCode::FORBIDDEN,
        RpcError::invalid_request(format!("forbidden: {why}")),
    )
}

async fn handle_get_or_delete(State(s): State<Arc<HttpServer>>, req: Request) -> Response {
    if let Err(why) = origin::check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    let caller = match &s.server.inner.settings.auth {
        Some(a) => match auth::authenticate(a, req.headers(), s.config.retry_after).await {
            Ok(p) => Some(p),
            Err(resp) => return resp,
        },
        None => None,
    };
    let legacy = if req.method() == Method::GET {
        s.legacy_get(req.headers(), caller.as_deref())
    } else {
        s.legacy_delete(req.headers(), caller.as_deref())
    };
    if let Some(resp) = legacy {
        return resp;
    }
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST")],
        "this MCP endpoint accepts POST only",
    )
        .into_response()
}

async fn handle_post(State(s): State<Arc<HttpServer>>, req: Request) -> Response {
    let mut resp = serve_post(&s, req).await;
    if let Some(auth::NeedsScopes(needed)) = resp.extensions_mut().remove::<auth::NeedsScopes>()
        && let Some(a) = &s.server.inner.settings.auth
    {
        auth::insufficient_scope(&mut resp, a, &needed);
    }
    if resp.status() == StatusCode::SERVICE_UNAVAILABLE
        && !resp.headers().contains_key(header::RETRY_AFTER)
    {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, s.config.retry_after.into());
    }
    resp
}

/// An error the transport answers itself, before anything was routed: a JSON-RPC error
/// body (no id) with `status`.
fn refuse(status: StatusCode, error: RpcError) -> Response {
    let body = Reply::rejection(None, Rejection::new(ErrorClass::Malformed, error)).body;
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A reply in the media type the client accepts: JSON, or one SSE event when it accepts
/// only `text/event-stream`.
fn answer(r: Reply, accepts_json: bool) -> Response {
    if accepts_json {
        json_reply(r)
    } else {
        let status = status_of(r.error);
        let mut resp = sse::sse_response(
            None,
            None::<std::pin::Pin<Box<std::future::Ready<Reply>>>>,
            mpsc::channel(1).1,
            Some(r.body),
        );
        *resp.status_mut() = status;
        resp
    }
}

async fn serve_post(s: &HttpServer, req: Request) -> Response {
    if let Err(why) = origin::check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    debug_assert_eq!(req.method(), Method::POST);
    // Who is calling, before anything else is read (a server without `Auth`: nobody).
    let caller = match &s.server.inner.settings.auth {
        Some(a) => match auth::authenticate(a, req.headers(), s.config.retry_after).await {
            Ok(p) => Some(p),
            Err(resp) => return resp,
        },
        None => None,
    };
    let (parts, body) = req.into_parts();
    if !headers::is_json_content_type(&parts.headers) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            RpcError::invalid_request("Content-Type must be application/json"),
        );
    }
    if parts
        .headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .any(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
    {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            RpcError::invalid_request("request Content-Encoding is not supported"),
        );
    }
    let (accepts_json, accepts_sse) = headers::accepted(&parts.headers);
    if !accepts_json && !accepts_sse {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            RpcError::invalid_request("Accept must allow application/json or text/event-stream"),
        );
    }
    // Admission, before the body is read: a busy server answers at once, and closes the
    // connection (the unread body cannot be skipped safely).
    let Some(slot) = s.server.inner.admit() else {
        tracing::warn!("too many requests in flight");
        let mut resp = refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            RpcError::internal("Too many requests in flight; try again later"),
        );
        resp.headers_mut().insert(
            header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
        return resp;
    };
    let limit = s.config.body_limit;
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            RpcError::invalid_request(format!("the request body is larger than {limit} bytes")),
        )
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large();
    }
    let deadline = s.config.body_read_timeout;
    let read = http_body_util::Limited::new(body, limit).collect();
    let bytes: Bytes = match tokio::time::timeout(deadline, read).await {
        Ok(Ok(c)) => c.to_bytes(),
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return too_large();
        }
        Ok(Err(_)) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                RpcError::invalid_request("the request body could not be read"),
            );
        }
        Err(_) => {
            tracing::debug!("request body too slow");
            let mut resp = refuse(
                StatusCode::REQUEST_TIMEOUT,
                RpcError::invalid_request(format!(
                    "the request body did not arrive within {deadline:?}"
                )),
            );
            resp.headers_mut().insert(
                header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
            return resp;
        }
    };
    let msg = match parse_strict(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return answer(
                Reply::rejection(
                    None,
                    Rejection::new(ErrorClass::Malformed, RpcError::parse_error(e)),
                ),
                accepts_json,
            );
        }
    };
    let msg = match s
        .legacy_post(
            msg,
            &parts.headers,
            (accepts_json, accepts_sse),
            caller.as_ref(),
        )
        .await
    {
        Ok(resp) => return resp.map(|b| conn::holding(b, vec![slot])),
        Err(msg) => msg,
    };

    let streams = if accepts_sse {
        Streams::OnDemand
    } else {
        Streams::None
    };
    let mut job = match s.server.prepare(
        msg,
        &HeaderGuard::new(&parts.headers).with_caller(caller),
        streams,
    ) {
        Prepared::Reply(r) => return answer(r, accepts_json),
        Prepared::Notification { .. } | Prepared::Answer => {
            return StatusCode::ACCEPTED.into_response();
        }
        Prepared::Listen(listen) if accepts_sse => {
            // Counted among open listen streams, not among requests in flight.
            drop(slot);
            return sse::listen_response(listen, s.config.keep_alive);
        }
        Prepared::Listen(_) => {
            return refuse(
                StatusCode::NOT_ACCEPTABLE,
                RpcError::invalid_request(
                    "subscriptions/listen answers with text/event-stream; add it to Accept",
                ),
            );
        }
        Prepared::Call(job) => job,
    };
    let rx = job.take_notifications();
    respond(job.run(), rx, accepts_json)
        .await
        .map(|b| conn::holding(b, vec![slot]))
}

/// The answer to a request that runs: JSON, unless the handler streams (its first
/// notification, or a request to the client, switches to SSE: those go first, then the
/// response).
async fn respond<F>(fut: F, rx: Option<mpsc::Receiver<String>>, accepts_json: bool) -> Response
where
    F: Future<Output = Reply> + Send + 'static,
{
    let Some(mut rx) = rx else {
        return answer(fut.await, accepts_json);
    };
    let mut fut = Box::pin(fut);
    if !accepts_json {
        return sse::sse_response(None, Some(fut), rx, None);
    }
    tokio::select! {
        biased;
        Some(note) = rx.recv() => sse::sse_response(Some(note), Some(fut), rx, None),
        reply = &mut fut => match rx.try_recv() {
            // It finished, but queued notifications first: they go before the response.
            Ok(first) => sse::sse_response(Some(first), None::<std::pin::Pin<Box<std::future::Ready<Reply>>>>, rx, Some(reply.body)),
            Err(_) => json_reply(reply),
        },
    }
}

//! Streamable HTTP (2026-07-28): one POST endpoint; JSON responses, or SSE when the request
//! streams notifications; header, Host/Origin, size and media-type rules.

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
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
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

/// Settings of the HTTP transport, set through the methods of [`HttpServer`].
#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    path: String,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Vec<String>,
    body_limit: usize,
    header_read_timeout: Duration,
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
            header_read_timeout: Duration::from_secs(10),
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

    /// How often an idle `subscriptions/listen` stream gets an SSE comment line (default
    /// [`DEFAULT_KEEP_ALIVE`]).
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.config.keep_alive = every;
        self
    }

    /// The axum router: POST on the path; GET and DELETE serve legacy sessions (405
    /// otherwise).
    pub fn into_router(self) -> Router {
        let path = self.config.path.clone();
        let shared = Arc::new(self);
        Router::new()
            .route(
                &path,
                post(handle_post)
                    .get(handle_get_or_delete)
                    .delete(handle_get_or_delete),
            )
            .with_state(shared)
    }

    /// Serves connections from `listener` until `shutdown` completes, then stops accepting
    /// and gives open connections the drain timeout to finish.
    ///
    /// Connections get a header read timeout (10 s), which `axum::serve` does not set.
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
        let header_timeout = self.config.header_read_timeout;
        let router = self.into_router();
        let graceful = GracefulShutdown::new();
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .keep_alive(true);
        let _ = TokioExecutor::new();
        tracing::info!("serving MCP on http://{local}/mcp");
        tokio::pin!(shutdown);
        loop {
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
            let service = TowerToHyperService::new(router.clone());
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let conn = graceful.watch(conn);
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(%peer, "connection ended: {e}");
                }
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
    }
}

fn json_reply(r: Reply) -> Response {
    let status = status_of(r.error);
    (status, [(header::CONTENT_TYPE, "application/json")], r.body).into_response()
}

/// An error response made by the transport itself (no request id could be read).
fn rpc_error_response(class: ErrorClass, error: RpcError) -> Response {
    json_reply(Reply::rejection(None, Rejection::new(class, error)))
}

/// The 403 answer to a failed Host/Origin check.
fn forbidden(why: &str) -> Response {
    let body = Reply::rejection(None, Rejection::malformed(&format!("forbidden: {why}"))).body;
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

async fn handle_get_or_delete(State(s): State<Arc<HttpServer>>, req: Request) -> Response {
    if let Err(why) = origin::check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    let legacy = if req.method() == Method::GET {
        s.legacy_get(req.headers())
    } else {
        s.legacy_delete(req.headers())
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
    if let Err(why) = origin::check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    debug_assert_eq!(req.method(), Method::POST);
    let (parts, body) = req.into_parts();
    if !headers::is_json_content_type(&parts.headers) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        )
            .into_response();
    }
    if parts
        .headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .any(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
    {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "request Content-Encoding is not supported",
        )
            .into_response();
    }
    let (accepts_json, accepts_sse) = headers::accepted(&parts.headers);
    if !accepts_json && !accepts_sse {
        return (
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow application/json or text/event-stream",
        )
            .into_response();
    }
    let limit = s.config.body_limit;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
    }
    let bytes: Bytes = match http_body_util::Limited::new(body, limit).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
            }
            return (StatusCode::BAD_REQUEST, "could not read the request body").into_response();
        }
    };
    let msg = match parse_strict(&bytes) {
        Ok(v) => v,
        Err(e) => return rpc_error_response(ErrorClass::Malformed, RpcError::parse_error(e)),
    };
    let msg = match s
        .legacy_post(msg, &parts.headers, (accepts_json, accepts_sse))
        .await
    {
        Ok(resp) => return resp,
        Err(msg) => msg,
    };

    let streams = if accepts_sse {
        Streams::OnDemand
    } else {
        Streams::None
    };
    let mut job = match s
        .server
        .prepare(msg, &HeaderGuard::new(&parts.headers), streams)
    {
        Prepared::Reply(r) => return json_reply(r),
        Prepared::Notification { .. } | Prepared::Answer => {
            return StatusCode::ACCEPTED.into_response();
        }
        Prepared::Listen(listen) if accepts_sse => {
            return sse::listen_response(listen, s.config.keep_alive);
        }
        Prepared::Listen(_) => {
            return (
                StatusCode::NOT_ACCEPTABLE,
                "subscriptions/listen answers with text/event-stream; add it to Accept",
            )
                .into_response();
        }
        Prepared::Call(job) => job,
    };
    let rx = job.take_notifications();
    respond(job.run(), rx, accepts_json).await
}

/// The answer to a request that runs: JSON, unless the handler streams (its first
/// notification, or a request to the client, switches to SSE: those go first, then the
/// response).
async fn respond<F>(fut: F, rx: Option<mpsc::Receiver<String>>, accepts_json: bool) -> Response
where
    F: Future<Output = Reply> + Send + 'static,
{
    let Some(mut rx) = rx else {
        return json_reply(fut.await);
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

//! Streamable HTTP (2026-07-28): one POST endpoint; JSON responses, or SSE when the request
//! streams notifications; header, Host/Origin, size and media-type rules.

use crate::protocol::{RpcError, json::parse_strict};
use crate::server::{Prepared, Reply, Server, Streams, TransportGuard};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::StreamExt;
use http_body_util::BodyExt;
use std::convert::Infallible;
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

/// Settings of the HTTP transport.
///
/// Not built directly: the methods of [`HttpServer`] set it.
///
/// ```
/// use mcp_runtime::{HttpConfig, Server};
///
/// assert!(format!("{:?}", HttpConfig::default()).contains("/mcp"));
/// let server = Server::builder("x", "1.0").build().unwrap();
/// let router = server.http().path("/api/mcp").body_limit(1 << 20).into_router();
/// # drop(router);
/// ```
#[derive(Debug, Clone)]
pub struct HttpConfig {
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
}

impl Server {
    /// HTTP settings for this server (see [`HttpServer`]).
    pub fn http(self) -> HttpServer {
        HttpServer {
            server: self,
            config: HttpConfig::default(),
        }
    }

    /// An axum [`Router`] serving this server at `/mcp` with default settings, to nest
    /// into an existing app (with your own tower layers).
    pub fn router(&self) -> Router {
        self.clone().http().into_router()
    }

    /// Binds `addr` and serves at `/mcp` until SIGINT/SIGTERM, then drains.
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> io::Result<()> {
        crate::telemetry::init();
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

    /// The axum router: POST on the path; GET and DELETE get 405.
    pub fn into_router(self) -> Router {
        let path = self.config.path.clone();
        let shared = Arc::new(self);
        Router::new()
            .route(
                &path,
                post(handle_post)
                    .get(handle_not_allowed)
                    .delete(handle_not_allowed),
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
        if tokio::time::timeout(drain, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("connections still open after {drain:?}; closing");
        }
        Ok(())
    }
}

fn rpc_error_response(status: StatusCode, err: &RpcError) -> Response {
    let body = crate::server::error_body(err);
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn json_reply(r: Reply) -> Response {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::OK);
    (status, [(header::CONTENT_TYPE, "application/json")], r.body).into_response()
}

async fn handle_not_allowed(State(s): State<Arc<HttpServer>>, req: Request) -> Response {
    if let Err(why) = check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST")],
        "this MCP endpoint accepts POST only",
    )
        .into_response()
}

/// DNS rebinding protection: `Host` must be allowed (loopback by default), and `Origin`,
/// when present, must be allowed too. Failures are 403.
fn check_host_origin(cfg: &HttpConfig, req: &Request) -> Result<(), &'static str> {
    if let Some(allowed) = &cfg.allowed_hosts {
        let hosts = req.headers().get_all(header::HOST);
        let mut iter = hosts.iter();
        let host = match (req.uri().authority(), iter.next(), iter.next()) {
            (Some(a), _, _) => a.as_str(),
            (None, Some(h), None) => match h.to_str() {
                Ok(h) => h,
                Err(_) => return Err("malformed Host header"),
            },
            (None, Some(_), Some(_)) => return Err("repeated Host header"),
            (None, None, _) => return Err("missing Host header"),
        };
        let name = host_name(host);
        if !is_loopback_name(name)
            && !allowed
                .iter()
                .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(name))
        {
            return Err("Host is not allowed");
        }
    }
    let origins = req.headers().get_all(header::ORIGIN);
    let mut iter = origins.iter();
    match (iter.next(), iter.next()) {
        (None, _) => Ok(()),
        (Some(_), Some(_)) => Err("repeated Origin header"),
        (Some(o), None) => {
            let Ok(o) = o.to_str() else {
                return Err("malformed Origin");
            };
            let o = o.trim().trim_end_matches('/').to_ascii_lowercase();
            let Some(rest) = o
                .strip_prefix("http://")
                .or_else(|| o.strip_prefix("https://"))
            else {
                return Err("Origin is not allowed");
            };
            if rest.contains(['/', '@', '?', '#']) {
                return Err("malformed Origin");
            }
            if is_loopback_name(host_name(rest)) || cfg.allowed_origins.contains(&o) {
                Ok(())
            } else {
                Err("Origin is not allowed")
            }
        }
    }
}

/// The 403 answer to a failed Host/Origin check.
fn forbidden(why: &str) -> Response {
    rpc_error_response(
        StatusCode::FORBIDDEN,
        &RpcError::invalid_request(format!("forbidden: {why}")),
    )
}

/// `host[:port]` → `host` (keeps IPv6 brackets).
fn host_name(authority: &str) -> &str {
    if let Some(end) = authority.find(']') {
        return &authority[..=end];
    }
    authority.split(':').next().unwrap_or(authority)
}

fn is_loopback_name(name: &str) -> bool {
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|l| l.eq_ignore_ascii_case(name))
}

/// `application/json`, parameters allowed, compared on the parsed media type.
fn is_json_content_type(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(v), None) = (values.next(), values.next()) else {
        return false;
    };
    let Ok(v) = v.to_str() else { return false };
    v.split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// Which response media types the client accepts: (json, sse). No `Accept` means JSON.
fn accepted(headers: &HeaderMap) -> (bool, bool) {
    let mut any = false;
    let (mut json, mut sse) = (false, false);
    for v in headers.get_all(header::ACCEPT) {
        let Ok(v) = v.to_str() else { continue };
        for item in v.split(',') {
            any = true;
            let mut parts = item.split(';');
            let ty = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.strip_prefix("q=")
                    .or_else(|| p.strip_prefix("Q="))
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            if refused {
                continue;
            }
            let is = |t: &str| ty.eq_ignore_ascii_case(t);
            if is("*/*") {
                json = true;
                sse = true;
            } else if is("application/*") || is("application/json") {
                json = true;
            } else if is("text/*") || is("text/event-stream") {
                sse = true;
            }
        }
    }
    if !any { (true, false) } else { (json, sse) }
}

/// The request headers the 2026-07-28 HTTP binding mirrors from the body.
pub(crate) struct HeaderGuard<'a>(&'a HeaderMap);

const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

impl<'a> HeaderGuard<'a> {
    pub(crate) fn new(headers: &'a HeaderMap) -> Self {
        HeaderGuard(headers)
    }

    /// The single value of a header, OWS-trimmed. `Err` for a repeated header or one with
    /// characters outside visible ASCII, space and tab.
    fn single(&self, name: &str, display: &str) -> Result<Option<&'a str>, RpcError> {
        let mut values = self.0.get_all(name).iter();
        match (values.next(), values.next()) {
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Err(RpcError::header_mismatch(format!(
                "repeated {display} header"
            ))),
            (Some(v), None) => {
                let bytes = v.as_bytes();
                if bytes.iter().any(|&b| (b < 0x20 && b != b'\t') || b >= 0x7f) {
                    return Err(RpcError::header_mismatch(format!(
                        "{display} header has invalid characters"
                    )));
                }
                // Visible ASCII only, so this cannot fail.
                let s = std::str::from_utf8(bytes).unwrap_or_default();
                Ok(Some(s.trim_matches([' ', '\t'])))
            }
        }
    }
}

use crate::protocol::headers::{self, HeaderParam, decode_header_value};
use serde_json::Value;

impl TransportGuard for HeaderGuard<'_> {
    fn check_method(&self, method: &str) -> Result<(), RpcError> {
        if self
            .single(VERSION_HEADER, "MCP-Protocol-Version")?
            .is_none()
        {
            return Err(RpcError::header_mismatch(
                "missing MCP-Protocol-Version header",
            ));
        }
        match self.single(METHOD_HEADER, "Mcp-Method")? {
            None => Err(RpcError::header_mismatch("missing Mcp-Method header")),
            Some(m) if m == method => Ok(()),
            Some(m) => Err(RpcError::header_mismatch(format!(
                "Mcp-Method header {} does not match the body method {}",
                crate::protocol::reflect(m),
                crate::protocol::reflect(method)
            ))),
        }
    }

    fn check_version(&self, version: &str) -> Result<(), RpcError> {
        match self.single(VERSION_HEADER, "MCP-Protocol-Version")? {
            Some(v) if v == version => Ok(()),
            Some(v) => Err(RpcError::header_mismatch(format!(
                "MCP-Protocol-Version header {} does not match _meta protocolVersion {}",
                crate::protocol::reflect(v),
                crate::protocol::reflect(version)
            ))),
            None => Err(RpcError::header_mismatch(
                "missing MCP-Protocol-Version header",
            )),
        }
    }

    fn check_param(&self, param: &HeaderParam, value: Option<&Value>) -> Result<(), RpcError> {
        let header = format!("mcp-param-{}", param.name.to_ascii_lowercase());
        let display = format!("Mcp-Param-{}", param.name);
        match (self.single(&header, &display)?, value) {
            (None, None) => Ok(()),
            (None, Some(_)) => Err(RpcError::header_mismatch(format!(
                "missing {display} header: the tool mirrors this argument into it"
            ))),
            (Some(_), None) => Err(RpcError::header_mismatch(format!(
                "{display} header sent, but the argument it mirrors is absent or null"
            ))),
            (Some(raw), Some(v)) => headers::header_matches(raw, param.kind, v)
                .map_err(|why| RpcError::header_mismatch(format!("{display} header {why}"))),
        }
    }

    fn check_name(&self, expected: &str) -> Result<(), RpcError> {
        let Some(raw) = self.single(NAME_HEADER, "Mcp-Name")? else {
            return Err(RpcError::header_mismatch("missing Mcp-Name header"));
        };
        let value = decode_header_value(raw)
            .ok_or_else(|| RpcError::header_mismatch("Mcp-Name header has invalid Base64"))?;
        if value == expected {
            Ok(())
        } else {
            Err(RpcError::header_mismatch(format!(
                "Mcp-Name header {} does not match the body {}",
                crate::protocol::reflect(&value),
                crate::protocol::reflect(expected)
            )))
        }
    }
}

async fn handle_post(State(s): State<Arc<HttpServer>>, req: Request) -> Response {
    if let Err(why) = check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    debug_assert_eq!(req.method(), Method::POST);
    let (parts, body) = req.into_parts();
    if !is_json_content_type(&parts.headers) {
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
    let (accepts_json, accepts_sse) = accepted(&parts.headers);
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
        Err(e) => return rpc_error_response(StatusCode::BAD_REQUEST, &RpcError::parse_error(e)),
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
        Prepared::Notification { .. } => return StatusCode::ACCEPTED.into_response(),
        Prepared::Listen(listen) if accepts_sse => {
            return listen_response(listen, s.config.keep_alive);
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
    let Some(mut rx) = job.take_notifications() else {
        return json_reply(job.run().await);
    };
    let mut fut = Box::pin(job.run());
    // JSON unless the handler streams: the first notification switches to SSE.
    if !accepts_json {
        return sse_response(None, Some(fut), rx, None);
    }
    tokio::select! {
        biased;
        Some(note) = rx.recv() => sse_response(Some(note), Some(fut), rx, None),
        reply = &mut fut => match rx.try_recv() {
            // It finished, but queued notifications first: they go before the response.
            Ok(first) => sse_response(Some(first), None::<std::pin::Pin<Box<std::future::Ready<Reply>>>>, rx, Some(reply.body)),
            Err(_) => json_reply(reply),
        },
    }
}

fn sse_frame(json: &str) -> Result<Bytes, Infallible> {
    Ok(Bytes::from(format!("data: {json}\n\n")))
}

fn sse_headers(resp: &mut Response) {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

/// A `subscriptions/listen` stream: the acknowledgement, then notifications, with a
/// comment line as keep-alive when idle. It ends with the listen result when the server
/// shuts down; when the client leaves, dropping the body ends the subscription.
fn listen_response(listen: crate::server::Listen, keep_alive: Duration) -> Response {
    let stream = futures_util::stream::unfold(listen, move |mut l| async move {
        match tokio::time::timeout(keep_alive, l.next()).await {
            Ok(Some(msg)) => Some((sse_frame(&msg), l)),
            Ok(None) => None,
            Err(_) => Some((Ok(Bytes::from_static(b":\n\n")), l)),
        }
    });
    let mut resp = Response::new(Body::from_stream(stream.boxed()));
    sse_headers(&mut resp);
    resp
}

/// Streams the request's notifications, then its response, then ends the stream.
fn sse_response<F>(
    first: Option<String>,
    fut: Option<std::pin::Pin<Box<F>>>,
    mut rx: mpsc::Receiver<String>,
    reply: Option<String>,
) -> Response
where
    F: Future<Output = Reply> + Send + 'static,
{
    struct St<F: Future> {
        pending: Option<String>,
        fut: Option<std::pin::Pin<Box<F>>>,
        rx: mpsc::Receiver<String>,
        reply: Option<String>,
    }
    if fut.is_none() {
        rx.close();
    }
    let st = St {
        pending: first,
        fut,
        rx,
        reply,
    };
    let stream = futures_util::stream::unfold(Some(st), |st| async move {
        let mut st = st?;
        if let Some(p) = st.pending.take() {
            return Some((sse_frame(&p), Some(st)));
        }
        if st.fut.is_none() {
            // The handler finished: flush what it queued, then the response.
            if let Ok(n) = st.rx.try_recv() {
                return Some((sse_frame(&n), Some(st)));
            }
            let reply = st.reply.take()?;
            return Some((sse_frame(&reply), None));
        }
        let fut = st.fut.as_mut()?;
        tokio::select! {
            biased;
            note = st.rx.recv() => match note {
                Some(n) => Some((sse_frame(&n), Some(st))),
                None => {
                    let reply = fut.as_mut().await;
                    Some((sse_frame(&reply.body), None))
                }
            },
            reply = fut.as_mut() => {
                st.fut = None;
                st.rx.close();
                st.reply = Some(reply.body);
                if let Ok(n) = st.rx.try_recv() {
                    return Some((sse_frame(&n), Some(st)));
                }
                let reply = st.reply.take()?;
                Some((sse_frame(&reply), None))
            }
        }
    });
    let mut resp = Response::new(Body::from_stream(stream.boxed()));
    sse_headers(&mut resp);
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sentinel() {
        assert_eq!(
            decode_header_value("=?base64?WsO8cmljaA==?=").unwrap(),
            "Zürich"
        );
        assert!(decode_header_value("=?base64?SGVsbG8?=").is_none());
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_none());
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").unwrap(),
            "=?base64?SGVsbG8="
        );
        assert_eq!(
            decode_header_value("=?BASE64?SGVsbG8=?=").unwrap(),
            "=?BASE64?SGVsbG8=?="
        );
        assert_eq!(decode_header_value("plain").unwrap(), "plain");
    }

    #[test]
    fn accept_header() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ACCEPT, v.parse().unwrap());
            accepted(&m)
        };
        assert_eq!(h("application/json, text/event-stream"), (true, true));
        assert_eq!(h("text/event-stream"), (false, true));
        assert_eq!(h("*/*"), (true, true));
        assert_eq!(h("text/html"), (false, false));
        assert_eq!(h("application/json;q=0, text/event-stream"), (false, true));
        assert_eq!(accepted(&HeaderMap::new()), (true, false));
    }

    #[test]
    fn hosts() {
        assert_eq!(host_name("127.0.0.1:3000"), "127.0.0.1");
        assert_eq!(host_name("[::1]:80"), "[::1]");
        assert!(is_loopback_name(host_name("localhost:1")));
        assert!(!is_loopback_name(host_name("localhost.evil.com")));
    }
}

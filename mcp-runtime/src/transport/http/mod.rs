//! Streamable HTTP (2026-07-28): one POST endpoint; JSON responses, or SSE when the request
//! streams notifications; header, Host/Origin, size and media-type rules.

mod auth;
mod config;
mod conn;
#[cfg(feature = "fuzzing")]
pub(crate) use conn::fuzz_head;
mod handle;
mod headers;
mod health;
mod legacy;
mod origin;
mod serve;
mod sse;

use config::HttpConfig;
#[cfg(feature = "metrics")]
use handle::host_checked;
use handle::{handle_get_or_delete, handle_other, json_reply, post_service, refuse, respond};
pub(crate) use headers::HeaderGuard;

use crate::server::Server;
use axum::Router;
use axum::routing::{self, get};
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};

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

/// The largest request header section (request line and headers) read by default: a
/// larger one is 431.
pub const DEFAULT_MAX_HEADER_SIZE: usize = 64 * 1024;

/// Default cap on the number of request header fields (hyper's; a request with more is
/// answered 431).
pub const DEFAULT_MAX_HEADERS: usize = 100;

/// How long [`Server::serve_http`] keeps serving after SIGTERM while its readiness
/// endpoint says it is going away, so balancers stop sending before it stops accepting.
pub const DEFAULT_LAME_DUCK: Duration = Duration::from_secs(5);

/// The default liveness path.
pub const DEFAULT_LIVENESS_PATH: &str = "/healthz";

/// The default readiness path.
pub const DEFAULT_READINESS_PATH: &str = "/readyz";

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
/// A size or time limit set to zero is refused, since it would refuse or cut off every
/// request: [`HttpServer::serve`] fails with an error of kind `InvalidInput` naming each
/// such option, and [`HttpServer::into_router`] panics with it.
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
    /// Whether it is going away (readiness false, connections close after their request).
    lifecycle: Arc<health::Lifecycle>,
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
            lifecycle: Arc::default(),
        }
    }

    /// An axum [`Router`] serving this server at `/mcp` with default settings, to nest
    /// into an existing app (with your own tower layers).
    pub fn router(&self) -> Router {
        self.clone().http().into_router()
    }

    /// Binds `addr` and serves at `/mcp` (with liveness at `/healthz` and readiness at
    /// `/readyz`) until SIGINT or SIGTERM, then drains. After SIGTERM it is a lame duck
    /// for [`DEFAULT_LAME_DUCK`] first (see [`HttpServer::lame_duck`]). Logs go wherever
    /// the application's `tracing` subscriber sends them (see
    /// [`telemetry::init`](crate::telemetry::init)).
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.http().serve_until_signal(listener).await
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
    /// The largest request header section, request line included (default
    /// [`DEFAULT_MAX_HEADER_SIZE`]); a larger one is answered 431. It holds where this
    /// server serves its own connections (`serve`, `serve_http`), not in a router you
    /// mount into a server of yours, whose own limits apply.
    pub fn max_header_size(mut self, bytes: usize) -> Self {
        self.config.max_header_size = bytes;
        self
    }
    /// The most header fields a request may carry (default [`DEFAULT_MAX_HEADERS`]); one
    /// with more is answered 431. Where it holds is as for
    /// [`max_header_size`](Self::max_header_size). Any other value than the default
    /// makes each request's header list a heap allocation (hyper keeps the default's on
    /// the stack), which costs a few percent of throughput.
    pub fn max_headers(mut self, n: usize) -> Self {
        self.config.max_headers = n;
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
    /// How long a request's headers may take, from its first byte (default
    /// [`DEFAULT_HEADER_READ_TIMEOUT`]).
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

    /// Serves `metrics` at `GET /metrics` beside the MCP endpoint (in
    /// [`HttpServer::serve`] and [`HttpServer::into_router`]).
    ///
    /// ```
    /// use mcp_runtime::Server;
    /// use mcp_runtime::metrics::Metrics;
    ///
    /// let server = Server::builder("x", "1.0").build().unwrap();
    /// let router = server.http().metrics(Metrics::install().unwrap()).into_router();
    /// # drop(router);
    /// ```
    #[cfg(feature = "metrics")]
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub fn metrics(mut self, metrics: crate::metrics::Metrics) -> Self {
        self.config.metrics = Some(metrics);
        self
    }

    /// [`HttpServer::serve`] until SIGINT or SIGTERM; after SIGTERM, a lame duck first
    /// (see [`HttpServer::lame_duck`]).
    pub async fn serve_until_signal(self, listener: TcpListener) -> io::Result<()> {
        let lame = self.config.lame_duck.unwrap_or(DEFAULT_LAME_DUCK);
        self.serve_inner(
            listener,
            Box::pin(async move {
                match crate::transport::termination().await {
                    crate::transport::Signal::Terminate => lame,
                    crate::transport::Signal::Interrupt => Duration::ZERO,
                }
            }),
        )
        .await
    }

    /// The axum router: POST on the path; GET and DELETE serve legacy sessions (405
    /// otherwise).
    ///
    /// With [`Auth`](crate::auth::Auth), it also serves the protected-resource metadata at
    /// its well-known paths (see [`HttpServer::metadata_router`]).
    ///
    /// # Panics
    ///
    /// When `body_limit`, `body_read_timeout` or `keep_alive` is set to zero, which would
    /// refuse every request or flood every stream ([`HttpServer::serve`] returns the same
    /// as an error of kind `InvalidInput` instead, checking the connection options too).
    pub fn into_router(self) -> Router {
        if let Err(e) = self.config.check(true) {
            panic!("{e}");
        }
        self.server.inner.start_background();
        let path = self.config.path.clone();
        let metadata = self.metadata_router();
        let shared = Arc::new(self);
        let router = Router::new()
            .route(
                &path,
                routing::post_service(post_service(Arc::clone(&shared)))
                    .get(handle_get_or_delete)
                    .delete(handle_get_or_delete)
                    .fallback(handle_other),
            )
            .with_state(Arc::clone(&shared))
            .merge(metadata);
        // Behind the same Host and Origin check as the MCP endpoint: on a loopback bind a
        // page rebinding its name to this server would read the metrics (tool names and
        // traffic) otherwise.
        #[cfg(feature = "metrics")]
        let router = match &shared.config.metrics {
            Some(m) => router.merge(m.router().route_layer(axum::middleware::from_fn_with_state(
                Arc::clone(&shared),
                host_checked,
            ))),
            None => router,
        };
        router
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

    /// Serves connections from `listener` until `shutdown` completes, then (after the lame
    /// duck time, if one is set with [`HttpServer::lame_duck`]) stops accepting and gives
    /// open connections the drain timeout to finish.
    ///
    /// Each connection gets the idle, header-read and write-stall deadlines (which
    /// `axum::serve` does not set); at most `max_connections` are open at once. The
    /// health endpoints are served beside the MCP one (see [`HttpServer::health_router`]).
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        let lame = self.config.lame_duck.unwrap_or(Duration::ZERO);
        // The accept loop is boxed and `Send` (compiled once, in this crate); `shutdown`
        // need be neither, so it is polled here and its end passed on.
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut serving = self.serve_inner(
            listener,
            Box::pin(async move {
                let _ = stopped.await;
                lame
            }),
        );
        let mut stop = Some(stop);
        let mut shutdown = std::pin::pin!(shutdown);
        std::future::poll_fn(|cx| {
            if stop.is_some()
                && shutdown.as_mut().poll(cx).is_ready()
                && let Some(stop) = stop.take()
            {
                let _ = stop.send(());
            }
            serving.as_mut().poll(cx)
        })
        .await
    }
}

//! Liveness and readiness endpoints, and the lifecycle they report: a server going away
//! says so on readiness (a lame duck) before it stops accepting, then closes each
//! connection after its next response.

use super::{DEFAULT_LIVENESS_PATH, DEFAULT_READINESS_PATH, HttpServer};
use crate::server::ServerInner;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::future::BoxFuture;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A check of what the server depends on (a shared store, say), run by each readiness
/// probe.
#[derive(Clone)]
pub(crate) struct ReadinessCheck(
    pub(crate) Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>,
);

impl std::fmt::Debug for ReadinessCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadinessCheck")
    }
}

/// How long a readiness check may take before the probe says unavailable.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// The health and shutdown settings of [`HttpServer`].
impl HttpServer {
    /// How long to stay a *lame duck* once shutdown begins (default: [`DEFAULT_LAME_DUCK`](super::DEFAULT_LAME_DUCK)
    /// after SIGTERM in [`HttpServer::serve_until_signal`] and [`Server::serve_http`](crate::Server::serve_http), none
    /// otherwise): readiness turns false and everything else goes on as before, so a
    /// balancer that probes readiness (or that is being reconfigured) stops sending
    /// meanwhile. Then the listener closes (new connections are refused, which balancers
    /// retry elsewhere), each open connection is closed after the request it serves or
    /// gets next (`Connection: close`), listen streams end with their result, and the
    /// server returns once every connection has closed, or after the drain timeout.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_runtime::Server) -> std::io::Result<()> {
    /// use std::time::Duration;
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
    /// server.http().lame_duck(Duration::from_secs(10)).serve_until_signal(listener).await
    /// # }
    /// ```
    pub fn lame_duck(mut self, d: Duration) -> Self {
        self.config.lame_duck = Some(d);
        self
    }

    /// Serves liveness at `live` and readiness at `ready` (default [`DEFAULT_LIVENESS_PATH`]
    /// and [`DEFAULT_READINESS_PATH`]) beside the MCP endpoint in [`HttpServer::serve`].
    pub fn health_paths(mut self, live: impl Into<String>, ready: impl Into<String>) -> Self {
        self.config.health = Some((live.into(), ready.into()));
        self
    }

    /// Runs `check` on each readiness probe: readiness is `503 {"status":"unavailable"}`
    /// while it fails (or takes over 2 s), and the reason is logged. For what the server
    /// cannot serve without, such as a shared store.
    ///
    /// ```no_run
    /// # #[cfg(feature = "redis")]
    /// # async fn run(server: mcp_runtime::Server, redis: mcp_runtime::store::redis::RedisStore) {
    /// let http = server.http().readiness_check(move || {
    ///     let redis = redis.clone();
    ///     async move { redis.ping().await.map_err(|e| e.to_string()) }
    /// });
    /// # drop(http);
    /// # }
    /// ```
    pub fn readiness_check<F, Fut>(mut self, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        use futures_util::FutureExt;
        self.config.readiness = Some(ReadinessCheck(Arc::new(move || check().boxed())));
        self
    }

    /// Serves no health endpoints in [`HttpServer::serve`].
    pub fn without_health(mut self) -> Self {
        self.config.health = None;
        self
    }

    /// The liveness and readiness endpoints, to mount in your own app (`serve` includes
    /// them). Liveness answers `200 {"status":"ok"}` while the process serves; readiness
    /// answers `200 {"status":"ready"}`, or `503` with `"starting"` until the catalog has
    /// caught up with the shared bus, and `"draining"` once shutdown begins.
    ///
    /// ```
    /// use mcp_runtime::Server;
    ///
    /// let http = Server::builder("x", "1.0").build().unwrap().http();
    /// let app = axum::Router::new().merge(http.health_router()).merge(http.into_router());
    /// # drop(app);
    /// ```
    pub fn health_router(&self) -> Router {
        let (live, ready) = self.config.health.clone().unwrap_or_else(|| {
            (
                DEFAULT_LIVENESS_PATH.to_owned(),
                DEFAULT_READINESS_PATH.to_owned(),
            )
        });
        router(
            &live,
            &ready,
            Arc::downgrade(&self.server.inner),
            Arc::clone(&self.lifecycle),
            self.config.readiness.clone(),
        )
    }
}

/// Where an HTTP server is in its life.
#[derive(Debug, Default)]
pub(crate) struct Lifecycle {
    /// Shutdown began: readiness is false.
    going: AtomicBool,
    /// The lame duck time is over: responses close their connection.
    closing: AtomicBool,
}

impl Lifecycle {
    pub(crate) fn going_away(&self) {
        self.going.store(true, Ordering::Release);
    }
    /// Shutdown begins with `lame` of lame duck: readiness turns false, and serving goes
    /// on until the instant returned (`None`: no lame duck, stop now).
    pub(crate) fn lame_duck_until(
        &self,
        lame: std::time::Duration,
    ) -> Option<tokio::time::Instant> {
        if lame.is_zero() {
            return None;
        }
        self.going_away();
        tracing::info!("lame duck for {lame:?}: readiness is false, still serving");
        Some(tokio::time::Instant::now() + lame)
    }
    pub(crate) fn close_connections(&self) {
        self.closing.store(true, Ordering::Release);
    }
    pub(crate) fn closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }
    fn going(&self) -> bool {
        self.going.load(Ordering::Acquire)
    }
}

fn status(code: StatusCode, status: &'static str) -> Response {
    (
        code,
        [
            (axum::http::header::CONTENT_TYPE, "application/json"),
            (axum::http::header::CACHE_CONTROL, "no-store"),
        ],
        format!(r#"{{"status":"{status}"}}"#),
    )
        .into_response()
}

/// `GET live` and `GET ready`.
pub(crate) fn router(
    live: &str,
    ready: &str,
    server: Weak<ServerInner>,
    lifecycle: Arc<Lifecycle>,
    check: Option<ReadinessCheck>,
) -> Router {
    let alive = server.clone();
    Router::new()
        .route(
            live,
            get(move || {
                let up = alive.upgrade().is_some();
                async move {
                    if up {
                        status(StatusCode::OK, "ok")
                    } else {
                        status(StatusCode::SERVICE_UNAVAILABLE, "stopped")
                    }
                }
            }),
        )
        .route(
            ready,
            get(move || {
                let early = match server.upgrade() {
                    _ if lifecycle.going() => {
                        Some(status(StatusCode::SERVICE_UNAVAILABLE, "draining"))
                    }
                    None => Some(status(StatusCode::SERVICE_UNAVAILABLE, "stopped")),
                    Some(s) if !s.is_ready() => {
                        Some(status(StatusCode::SERVICE_UNAVAILABLE, "starting"))
                    }
                    Some(_) => None,
                };
                let check = check.clone();
                async move {
                    if let Some(a) = early {
                        return a;
                    }
                    let Some(check) = check else {
                        return status(StatusCode::OK, "ready");
                    };
                    match tokio::time::timeout(CHECK_TIMEOUT, (check.0)()).await {
                        Ok(Ok(())) => status(StatusCode::OK, "ready"),
                        Ok(Err(e)) => {
                            tracing::warn!("not ready: {e}");
                            status(StatusCode::SERVICE_UNAVAILABLE, "unavailable")
                        }
                        Err(_) => {
                            tracing::warn!(
                                "not ready: the readiness check took over {CHECK_TIMEOUT:?}"
                            );
                            status(StatusCode::SERVICE_UNAVAILABLE, "unavailable")
                        }
                    }
                }
            }),
        )
}

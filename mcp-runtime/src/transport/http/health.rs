//! Liveness and readiness endpoints, and the lifecycle they report: a server going away
//! says so on readiness (a lame duck) before it stops accepting, then closes each
//! connection after its next response.

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

//! The HTTP transport's settings ([`HttpConfig`]), their defaults, and the check that
//! refuses a limit set to zero.

use super::health;
use super::{
    DEFAULT_BODY_LIMIT, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_DRAIN, DEFAULT_HEADER_READ_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_KEEP_ALIVE, DEFAULT_LIVENESS_PATH, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEADER_SIZE, DEFAULT_MAX_HEADERS, DEFAULT_READINESS_PATH, DEFAULT_RETRY_AFTER,
    DEFAULT_WRITE_STALL_TIMEOUT,
};
use std::time::Duration;

/// Settings of the HTTP transport, set through the methods of
/// [`HttpServer`](super::HttpServer).
#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    pub(super) path: String,
    pub(super) allowed_hosts: Option<Vec<String>>,
    pub(super) allowed_origins: Vec<String>,
    pub(super) body_limit: usize,
    pub(super) max_header_size: usize,
    pub(super) max_headers: usize,
    pub(super) idle_timeout: Duration,
    pub(super) header_read_timeout: Duration,
    pub(super) body_read_timeout: Duration,
    pub(super) write_stall_timeout: Duration,
    pub(super) max_connections: usize,
    pub(super) retry_after: u64,
    pub(super) drain: Duration,
    pub(super) keep_alive: Duration,
    /// `None`: [`DEFAULT_LAME_DUCK`](super::DEFAULT_LAME_DUCK) after SIGTERM in
    /// `serve_http`, none otherwise.
    pub(super) lame_duck: Option<Duration>,
    /// Liveness and readiness paths, served by [`HttpServer::serve`](super::HttpServer::serve).
    pub(super) health: Option<(String, String)>,
    /// `GET /metrics`, when set.
    #[cfg(feature = "metrics")]
    pub(super) metrics: Option<crate::metrics::Metrics>,
    /// Run by each readiness probe.
    pub(super) readiness: Option<health::ReadinessCheck>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: Some(Vec::new()),
            allowed_origins: Vec::new(),
            body_limit: DEFAULT_BODY_LIMIT,
            max_header_size: DEFAULT_MAX_HEADER_SIZE,
            max_headers: DEFAULT_MAX_HEADERS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            write_stall_timeout: DEFAULT_WRITE_STALL_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            retry_after: DEFAULT_RETRY_AFTER,
            drain: DEFAULT_DRAIN,
            keep_alive: DEFAULT_KEEP_ALIVE,
            lame_duck: None,
            health: Some((
                DEFAULT_LIVENESS_PATH.to_owned(),
                DEFAULT_READINESS_PATH.to_owned(),
            )),
            #[cfg(feature = "metrics")]
            metrics: None,
            readiness: None,
        }
    }
}

impl HttpConfig {
    /// Every option set to zero where zero would refuse or cut off every request (a
    /// deadline that has always passed, a limit nothing fits in), each with why; `Ok` when
    /// there is none. `for_router`: only the options a mounted router applies.
    pub(super) fn check(&self, for_router: bool) -> Result<(), String> {
        let mut zero: Vec<&str> = Vec::new();
        let mut at = |is_zero: bool, what: &'static str| {
            if is_zero {
                zero.push(what);
            }
        };
        at(
            self.body_limit == 0,
            "`body_limit` (every request body would be too large: 413)",
        );
        at(
            self.body_read_timeout.is_zero(),
            "`body_read_timeout` (every request body would be late: 408)",
        );
        at(
            self.keep_alive.is_zero(),
            "`keep_alive` (an idle stream would be sent comment lines without pause)",
        );
        if !for_router {
            at(
                self.max_header_size == 0,
                "`max_header_size` (every request would be 431)",
            );
            at(
                self.max_headers == 0,
                "`max_headers` (every request with a header would be 431)",
            );
            at(
                self.idle_timeout.is_zero(),
                "`idle_timeout` (every connection would be closed before its first byte)",
            );
            at(
                self.header_read_timeout.is_zero(),
                "`header_read_timeout` (every request's headers would be late)",
            );
            at(
                self.write_stall_timeout.is_zero(),
                "`write_stall_timeout` (a connection would be closed on any write that has \
                 to wait)",
            );
        }
        if !zero.is_empty() {
            return Err(format!(
                "HTTP settings set to zero, which is refused: {}",
                zero.join("; ")
            ));
        }
        self.check_routes(for_router)
    }

    /// Every route at a path of its own (the router panics on two at one path): the MCP
    /// endpoint, the health endpoints (when served: `for_router` is false) and `/metrics`.
    fn check_routes(&self, for_router: bool) -> Result<(), String> {
        let mut routes: Vec<(&str, &str)> = vec![(&self.path, "the MCP endpoint (`path`)")];
        if let (false, Some((live, ready))) = (for_router, &self.health) {
            routes.push((live, "liveness (`health_paths`)"));
            routes.push((ready, "readiness (`health_paths`)"));
        }
        #[cfg(feature = "metrics")]
        if self.metrics.is_some() {
            routes.push(("/metrics", "the metrics (`metrics`)"));
        }
        for (i, (path, what)) in routes.iter().enumerate() {
            if let Some((_, other)) = routes[..i].iter().find(|(p, _)| p == path) {
                return Err(format!(
                    "{other} and {what} are both at `{path}`; give them paths of their own"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two routes at one path (the MCP endpoint at `/healthz`, readiness at `/metrics`
    /// with the metrics served) are refused with what clashes: the router panicked on
    /// them when it was made (`serve`, `into_router`).
    #[test]
    fn routes_have_paths_of_their_own() {
        assert_eq!(HttpConfig::default().check(false), Ok(()));
        let at_health = HttpConfig {
            path: DEFAULT_LIVENESS_PATH.into(),
            ..HttpConfig::default()
        };
        let e = at_health.check(false).unwrap_err();
        assert!(e.contains("the MCP endpoint (`path`) and liveness"), "{e}");
        assert!(e.contains("`/healthz`"), "{e}");
        // A mounted router serves no health endpoints: no clash there.
        assert_eq!(at_health.check(true), Ok(()));
        let same = HttpConfig {
            health: Some(("/up".into(), "/up".into())),
            ..HttpConfig::default()
        };
        assert!(same.check(false).is_err());
    }
}

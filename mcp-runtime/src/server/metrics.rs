//! Request metrics (the `metrics` feature), in the Prometheus text format: how many
//! requests, how long they took, how many are in flight, and the errors by code, per
//! method and per tool or prompt. Off until [`Metrics::install`]; recorded once per
//! request, where both transports and both eras hand their messages to the core.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `mcp_requests_total` | counter | `method`, `name`, `outcome` (`ok`, `input_required`, `tool_error`, `error`, `cancelled`) |
//! | `mcp_request_errors_total` | counter | `method`, `code` (the JSON-RPC error code) |
//! | `mcp_request_duration_seconds` | histogram | `method`, `name` |
//! | `mcp_requests_in_flight` | gauge | |
//! | `mcp_requests_refused_total` | counter | `reason` (`busy`: past the in-flight cap) |
//!
//! `cancelled` counts the requests that ended without an answer: cancelled by the client
//! (`notifications/cancelled`, a closed stream or connection) before their handler was
//! done. Their time until then is in the histogram too.
//!
//! A request refused before it is routed counts as a request (outcome `error`, empty
//! `name`) and as an error by its code, under its method when that is one of MCP (else
//! `unknown`): for its envelope, `params`, `_meta`, revision or headers, in either era;
//! over HTTP also for its media types (`Content-Type`, `Content-Encoding`, `Accept`), its
//! body's size, a body that could not be read or is not JSON (`-32700`), or a legacy
//! session's `MCP-Protocol-Version` or `Mcp-Session-Id` (unknown or missing). What HTTP
//! refuses before that (Host/Origin, authentication), a method other than POST, and the
//! `initialize` that opens a session (answered or refused) are not counted.
//!
//! A request refused as busy (past [`Limits::max_in_flight`](crate::config::Limits)) is
//! counted only in `mcp_requests_refused_total`: over HTTP it is refused before its body
//! is read, so its method is not known.
//!
//! `name` is the tool or prompt name for `tools/call` and `prompts/get` when the server
//! has an item of that name (`unknown` otherwise, so a hostile client cannot grow the
//! label set), empty for other methods.

use super::ServerInner;
use super::reply::Reply;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// The histogram buckets of `mcp_request_duration_seconds`, up to the default request
/// timeout ([`DEFAULT_REQUEST_TIMEOUT`](crate::config::DEFAULT_REQUEST_TIMEOUT), 300 s): a
/// request that runs until it times out lands in a bucket of its own, not only in `+Inf`.
pub const DURATION_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 120.0, 300.0,
];

/// The methods of both eras (any other is `unknown`: labels stay bounded).
const KNOWN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "initialize",
    "ping",
    "logging/setLevel",
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
static RECORDED: AtomicU64 = AtomicU64::new(0);

/// The process's request metrics. [`Metrics::install`] turns them on (once per process:
/// it installs the global `metrics` recorder); every server of the process records into
/// it.
///
/// ```
/// let metrics = mcp_runtime::metrics::Metrics::install().unwrap();
/// assert!(metrics.render().is_empty() || metrics.render().contains("mcp_"));
/// // Serve it: `server.http().metrics(metrics)` adds `GET /metrics`.
/// ```
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    /// Installs the Prometheus recorder (or returns the one installed already). Fails
    /// when another `metrics` recorder is installed in the process.
    pub fn install() -> Result<Metrics, String> {
        // One at a time: two threads installing at once both found no handle, and the
        // second failed as if another crate's recorder were installed.
        static INSTALLING: Mutex<()> = Mutex::new(());
        let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = HANDLE.get() {
            return Ok(Metrics { handle: h.clone() });
        }
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("mcp_request_duration_seconds".into()),
                DURATION_BUCKETS,
            )
            .map_err(|e| e.to_string())?
            .install_recorder()
            .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
        let handle = HANDLE.get_or_init(|| handle).clone();
        metrics::describe_counter!("mcp_requests_total", "MCP requests, by outcome");
        metrics::describe_counter!(
            "mcp_request_errors_total",
            "MCP requests answered with a JSON-RPC error, by code"
        );
        metrics::describe_histogram!(
            "mcp_request_duration_seconds",
            metrics::Unit::Seconds,
            "How long MCP requests took, until their answer was ready"
        );
        metrics::describe_gauge!(
            "mcp_requests_in_flight",
            "MCP requests being served (in this process, from their routing to their answer)"
        );
        metrics::describe_counter!(
            "mcp_requests_refused_total",
            "MCP requests refused before they were served, by reason"
        );
        Ok(Metrics { handle })
    }

    /// The metrics in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        self.handle.run_upkeep();
        self.handle.render()
    }

    /// `GET /metrics`, to mount in your own app ([`HttpServer::metrics`](crate::http::HttpServer::metrics)
    /// serves it beside the MCP endpoint).
    pub fn router(&self) -> axum::Router {
        let m = self.clone();
        axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let body = m.render();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        body,
                    )
                }
            }),
        )
    }
}

/// One request being measured.
pub(crate) struct Observation {
    start: Instant,
    method: &'static str,
    name: String,
}

/// Starts measuring a request, when metrics are on (off, this is one atomic load: the
/// catalog is read only when the name label is needed).
pub(crate) fn begin(
    method: &str,
    params: &serde_json::Map<String, serde_json::Value>,
    server: &ServerInner,
) -> Option<Observation> {
    HANDLE.get()?;
    let catalog = server.catalog();
    let named = |known: bool| {
        if known {
            params
                .get("name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("unknown")
                .to_owned()
        } else {
            "unknown".to_owned()
        }
    };
    let wanted = params.get("name").and_then(serde_json::Value::as_str);
    let name = match method {
        crate::protocol::methods::TOOLS_CALL => {
            named(wanted.is_some_and(|n| catalog.tools.contains_key(n)))
        }
        crate::protocol::methods::PROMPTS_GET => {
            named(wanted.is_some_and(|n| catalog.prompts.contains_key(n)))
        }
        _ => String::new(),
    };
    let method = method_label(method);
    metrics::gauge!("mcp_requests_in_flight").increment(1.0);
    Some(Observation {
        start: Instant::now(),
        method,
        name,
    })
}

/// Starts measuring a legacy `initialize` (its transport records the answer with [`end`],
/// or drops the observation when it refuses the session as busy after all).
pub(crate) fn begin_initialize(server: &ServerInner) -> Option<Observation> {
    begin("initialize", &serde_json::Map::new(), server)
}

/// A request measured is in flight from [`begin`] until its observation is gone, however
/// it ended (recorded, cancelled, or refused before its work started).
impl Drop for Observation {
    fn drop(&mut self) {
        metrics::gauge!("mcp_requests_in_flight").decrement(1.0);
    }
}

/// The `method` label of `method`: itself when it is a method of MCP, else `unknown`.
pub(crate) fn method_label(method: &str) -> &'static str {
    KNOWN_METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("unknown")
}

/// The `method` label of a message not yet read into a request: [`method_label`] of its
/// `method` member (`unknown` when it has none, or not a string).
pub(crate) fn label_of(msg: &serde_json::Value) -> &'static str {
    method_label(
        msg.get("method")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default(),
    )
}

/// Counts a request answered with an error before it was routed (its envelope, `_meta`
/// or headers refused, or over HTTP its media types or body), when metrics are on: it is
/// no observation, but a request and an error all the same.
pub(crate) fn rejected(method: &'static str, reply: &Reply) {
    let Some(rpc) = reply.rpc.as_ref().filter(|_| HANDLE.get().is_some()) else {
        return;
    };
    metrics::counter!(
        "mcp_request_errors_total",
        "method" => method,
        "code" => serde_json::to_string(&rpc.1.code()).unwrap_or_default()
    )
    .increment(1);
    metrics::counter!(
        "mcp_requests_total",
        "method" => method,
        "name" => "",
        "outcome" => "error"
    )
    .increment(1);
}

/// Counts a request refused as busy, when metrics are on.
pub(crate) fn refused_busy() {
    if HANDLE.get().is_some() {
        metrics::counter!("mcp_requests_refused_total", "reason" => "busy").increment(1);
    }
}

/// Records how a measured request ended.
pub(crate) fn end(obs: Observation, reply: &Reply) {
    let outcome = if let Some(rpc) = &reply.rpc {
        metrics::counter!(
            "mcp_request_errors_total",
            "method" => obs.method,
            "code" => serde_json::to_string(&rpc.1.code()).unwrap_or_default()
        )
        .increment(1);
        "error"
    } else {
        match serde_json::from_str::<Answer>(&reply.body)
            .ok()
            .and_then(|a| a.result)
        {
            Some(r) if r.result_type.as_deref() == Some("input_required") => "input_required",
            Some(r) if r.is_error == Some(true) => "tool_error",
            _ => "ok",
        }
    };
    record(obs, outcome);
}

/// What the outcome of an answer is read from: its result's own `resultType` and
/// `isError` (not text anywhere in it: a tool's structured content may hold those words).
#[derive(serde::Deserialize)]
struct Answer {
    result: Option<ResultHead>,
}

/// See [`Answer`].
#[derive(serde::Deserialize)]
struct ResultHead {
    #[serde(rename = "resultType")]
    result_type: Option<String>,
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

/// A request's observation while its work runs: [`Watch::end`] records its answer;
/// dropped after [`Watch::start`] and before that (the work was cancelled, or its
/// connection closed), it records the outcome `cancelled`. Work dropped before it started
/// (refused by the transport, as a reused request id is) records nothing here.
pub(crate) struct Watch {
    obs: Option<Observation>,
    started: bool,
}

impl Watch {
    pub(crate) fn new(obs: Observation) -> Watch {
        Watch {
            obs: Some(obs),
            started: false,
        }
    }

    /// The work has started: from here, a drop is a cancellation.
    pub(crate) fn start(&mut self) {
        self.started = true;
    }

    /// Records the answer.
    pub(crate) fn end(mut self, reply: &Reply) {
        if let Some(obs) = self.obs.take() {
            end(obs, reply);
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(obs) = self.obs.take().filter(|_| self.started) {
            record(obs, "cancelled");
        }
    }
}

/// The counters, the histogram and the gauge for one request that ended with `outcome`.
fn record(mut obs: Observation, outcome: &'static str) {
    metrics::counter!(
        "mcp_requests_total",
        "method" => obs.method,
        "name" => obs.name.clone(),
        "outcome" => outcome
    )
    .increment(1);
    metrics::histogram!(
        "mcp_request_duration_seconds",
        "method" => obs.method,
        "name" => std::mem::take(&mut obs.name)
    )
    .record(obs.start.elapsed().as_secs_f64());
    if RECORDED.fetch_add(1, Ordering::Relaxed) % 4096 == 4095
        && let Some(h) = HANDLE.get()
    {
        h.run_upkeep();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first install, from threads at once: each gets the one recorder (all but one
    /// failed with "cannot install the metrics recorder").
    #[test]
    fn installs_at_once_all_succeed() {
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            let all: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        Metrics::install().map(|_| ())
                    })
                })
                .collect();
            for t in all {
                assert_eq!(t.join().ok(), Some(Ok(())));
            }
        });
    }

    #[test]
    fn the_duration_buckets_rise_up_to_the_default_request_timeout() {
        assert!(DURATION_BUCKETS.windows(2).all(|w| w[0] < w[1]));
        let timeout = crate::config::DEFAULT_REQUEST_TIMEOUT.as_secs_f64();
        assert_eq!(DURATION_BUCKETS.last(), Some(&timeout));
    }
}

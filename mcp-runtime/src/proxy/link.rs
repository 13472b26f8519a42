//! The client side a proxy needs, once: the connection to one upstream MCP server (a child
//! on stdio, an in-process pipe, or Streamable HTTP), the era it speaks settled, and the
//! requests and answers sent to it, many at a time.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::ongoing::{Cancel, Ongoing};
use super::routing::{Askers, Changes, route};
use super::streams::{Listen, Peer, answer_in, read_events};
use super::watch::Watch;
use crate::protocol::headers::{HeaderParam, header_params, param_headers};
use crate::transport::stdio::lines::{Line, Lines, Overlong};

/// How long one upstream request may take.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest line (or HTTP body) accepted from an upstream.
pub(super) const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// Why an upstream request has no result.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UpstreamError {
    /// It answered with a JSON-RPC error.
    Rpc {
        /// The error code.
        code: i32,
        /// The message.
        message: String,
        /// The data, if any.
        data: Option<Value>,
    },
    /// It could not be reached, went away, or answered something that is not MCP.
    Unavailable(String),
    /// It took longer than [`DEFAULT_UPSTREAM_TIMEOUT`].
    Timeout,
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpstreamError::Rpc { code, message, .. } => write!(f, "error {code}: {message}"),
            UpstreamError::Unavailable(why) => f.write_str(why),
            UpstreamError::Timeout => write!(f, "no answer within its time limit"),
        }
    }
}

impl std::error::Error for UpstreamError {}

pub(super) fn gone(why: impl fmt::Display) -> UpstreamError {
    UpstreamError::Unavailable(why.to_string())
}

/// The stdio requests waiting, by id: each gets its answer, or why it has none.
type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, UpstreamError>>>>>;

pub(super) enum Wire {
    Stdio {
        out: mpsc::Sender<String>,
        pending: Pending,
        askers: Askers,
        closed: CancellationToken,
        _child: Mutex<Option<tokio::process::Child>>,
    },
    Http(Peer),
}

/// A connection to one upstream, after the era was settled.
pub(crate) struct Link {
    pub(super) wire: Wire,
    pub(super) next: AtomicU64,
    /// The revision spoken; `2026-07-28` means every request carries `_meta`.
    pub(super) version: String,
    /// What `server/discover` or `initialize` said.
    pub(super) hello: Value,
    pub(super) changes: Arc<Changes>,
    /// Cancelled when the link goes: its writer and streams end.
    pub(super) dropped: CancellationToken,
    /// The stream of resource updates asked for (2026-07-28).
    pub(super) watching: Mutex<Option<Watch>>,
    /// The `x-mcp-header` parameters of the upstream's tools, by name, as last listed: a
    /// 2026-07-28 HTTP upstream refuses a call without their `Mcp-Param-*` headers.
    pub(super) headers: Mutex<HashMap<String, Vec<HeaderParam>>>,
}

pub(super) const MODERN: &str = crate::protocol::PROTOCOL_VERSION;

impl Link {
    pub(crate) async fn stdio(mut cmd: tokio::process::Command) -> Result<Link, UpstreamError> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| gone(format!("cannot start it: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(gone("no pipes to it"));
        };
        Self::pipes(stdout, stdin, Some(child), CancellationToken::new()).await
    }

    /// Newline-delimited JSON-RPC over `read` and `write` (a child's stdout and stdin, or
    /// an in-process pipe); `dropped` is cancelled when the link goes.
    pub(crate) async fn pipes<R, W>(
        read: R,
        write: W,
        child: Option<tokio::process::Child>,
        dropped: CancellationToken,
    ) -> Result<Link, UpstreamError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (stdin, stdout) = (write, read);
        let (out, mut queue) = mpsc::channel::<String>(256);
        let pending: Pending = Arc::default();
        let closed = CancellationToken::new();
        // Writer: one line per message, until the link goes.
        let ended = dropped.clone();
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(line) = tokio::select! {
                l = queue.recv() => l,
                () = ended.cancelled() => None,
            } {
                if stdin.write_all(line.as_bytes()).await.is_err()
                    || stdin.write_all(b"\n").await.is_err()
                    || stdin.flush().await.is_err()
                {
                    return;
                }
            }
        });
        // Reader: answers go to their request; a request of the server goes to the one call
        // in flight when it is one this proxy passes on, else it gets the answer it can
        // have; list changes are told.
        let askers: Askers = Arc::default();
        let changes = Arc::new(Changes::default());
        {
            let (pending, closed, out) = (Arc::clone(&pending), closed.clone(), out.clone());
            let (askers, changes) = (Arc::clone(&askers), Arc::clone(&changes));
            tokio::spawn(async move {
                // Lines past the limit are skipped as they come, never buffered whole.
                let stdout = BufReader::with_capacity(64 * 1024, stdout);
                let mut lines = Lines::new(stdout, MAX_MESSAGE);
                loop {
                    let line = match lines.next().await {
                        Ok(Line::Message(line)) => line,
                        Ok(Line::TooLong(long)) => {
                            too_long(&long, &pending);
                            continue;
                        }
                        Ok(Line::Eof) => break,
                        Err(e) => {
                            tracing::warn!("reading the upstream server's stdout: {e}");
                            break;
                        }
                    };
                    let Some(msg) = message(&line, &pending) else {
                        continue;
                    };
                    if msg.get("method").is_some() {
                        if let Some(reply) = route(&msg, &askers, &changes) {
                            let _ = out.send(reply.to_string()).await;
                        }
                        continue;
                    }
                    let Some(n) = msg.get("id").and_then(Value::as_u64) else {
                        continue;
                    };
                    let waiting = pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&n);
                    if let Some(tx) = waiting {
                        let _ = tx.send(Ok(msg));
                    }
                }
                closed.cancel();
                pending.lock().unwrap_or_else(|e| e.into_inner()).clear();
                askers.lock().unwrap_or_else(|e| e.into_inner()).clear();
                tracing::warn!("the upstream server closed its stdout");
            });
        }
        let wire = Wire::Stdio {
            out,
            pending,
            askers,
            closed,
            _child: Mutex::new(child),
        };
        Self::settle(wire, changes, dropped).await
    }

    pub(crate) async fn http(
        url: &str,
        options: &super::HttpOptions,
    ) -> Result<Link, UpstreamError> {
        let url: hyper::Uri = url
            .parse()
            .map_err(|e| gone(format!("bad URL `{url}`: {e}")))?;
        if !matches!(url.scheme_str(), Some("http" | "https")) {
            return Err(gone("an HTTP upstream's URL is http:// or https://"));
        }
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(options.connector()?);
        let wire = Wire::Http(Peer {
            url,
            client,
            headers: Arc::new(options.header_map()?),
            session: Arc::default(),
            reopening: Arc::default(),
            patience: options.timeout.unwrap_or(DEFAULT_UPSTREAM_TIMEOUT),
        });
        Self::settle(wire, Arc::default(), CancellationToken::new()).await
    }

    /// Finds the era: `server/discover` first; `initialize` when it is not known.
    async fn settle(
        wire: Wire,
        changes: Arc<Changes>,
        dropped: CancellationToken,
    ) -> Result<Link, UpstreamError> {
        let mut link = Link {
            wire,
            next: AtomicU64::new(1),
            version: MODERN.to_owned(),
            hello: Value::Null,
            changes,
            dropped,
            watching: Mutex::new(None),
            headers: Mutex::default(),
        };
        match link.request("server/discover", json!({})).await {
            Ok(d)
                if d["supportedVersions"]
                    .as_array()
                    .is_some_and(|v| v.iter().any(|x| x == MODERN)) =>
            {
                link.hello = d;
                link.listen().await;
                return Ok(link);
            }
            Ok(_) | Err(UpstreamError::Rpc { .. }) => {}
            Err(e) => return Err(e),
        }
        link.version = "2025-11-25".to_owned();
        let hello = link.request("initialize", initialize_params()).await?;
        if let Some(v) = hello["protocolVersion"].as_str() {
            link.version = v.to_owned();
        }
        link.hello = hello;
        link.notify("notifications/initialized").await?;
        tracing::info!(version = %link.version, "connected to a legacy upstream");
        link.listen().await;
        Ok(link)
    }

    pub(crate) fn version(&self) -> &str {
        &self.version
    }
    pub(crate) fn capabilities(&self) -> Map<String, Value> {
        self.hello["capabilities"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    }
    pub(crate) fn server_info(&self) -> Value {
        let modern = self.hello["_meta"]["io.modelcontextprotocol/serverInfo"].clone();
        if modern.is_object() {
            modern
        } else {
            self.hello["serverInfo"].clone()
        }
    }
    pub(crate) fn instructions(&self) -> Option<String> {
        self.hello["instructions"].as_str().map(str::to_owned)
    }

    pub(crate) fn is_modern(&self) -> bool {
        self.version == MODERN
    }

    async fn notify(&self, method: &str) -> Result<(), UpstreamError> {
        let msg = json!({"jsonrpc": "2.0", "method": method});
        match &self.wire {
            Wire::Stdio { out, .. } => out.send(msg.to_string()).await.map_err(gone),
            Wire::Http(_) => self.post(&msg, None).await.map(drop),
        }
    }

    /// One request; its result.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, UpstreamError> {
        self.request_with(method, params, None).await
    }

    /// One request telling a 2026-07-28 upstream the client capabilities `caps` (the
    /// tasks extension, which every `tasks/*` request must declare); its result.
    pub(crate) async fn request_with(
        &self,
        method: &str,
        params: Value,
        caps: Option<&Value>,
    ) -> Result<Value, UpstreamError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let name = target_name(&params);
        let msg = self.message(id, method, params, caps);
        let patience = match &self.wire {
            Wire::Http(peer) => peer.patience,
            Wire::Stdio { .. } => DEFAULT_UPSTREAM_TIMEOUT,
        };
        let answer = tokio::time::timeout(patience, async {
            match &self.wire {
                Wire::Stdio { closed, .. } => {
                    // Given up (its time ran out, or the caller went), it is forgotten
                    // and cancelled upstream as `_waiting` drops.
                    let (rx, _waiting) = self.enqueue(id, &msg, method != "initialize").await?;
                    tokio::select! {
                        a = rx => a.unwrap_or_else(|_| Err(gone("the upstream server exited"))),
                        () = closed.cancelled() => Err(gone("the upstream server exited")),
                    }
                }
                Wire::Http(_) => self
                    .post(&msg, name.as_deref())
                    .await?
                    .ok_or_else(|| gone("no answer")),
            }
        })
        .await
        .map_err(|_| UpstreamError::Timeout)??;
        outcome(answer)
    }

    /// An HTTP upstream's change stream (`open`: the `subscriptions/listen` request; `None`:
    /// the GET stream), also what posts our notifications to it.
    pub(super) fn peer(&self, open: Option<Value>) -> Option<Listen> {
        let Wire::Http(peer) = &self.wire else {
            return None;
        };
        Some(Listen {
            peer: peer.clone(),
            version: self.version.clone(),
            changes: Arc::clone(&self.changes),
            open,
        })
    }

    /// Sends a request on stdio; where its answer will come, and its place among the
    /// requests waiting for one (see [`Waiting`]; `cancel`: whether the upstream is told
    /// when it is given up, which `initialize` never is).
    async fn enqueue(
        &self,
        id: u64,
        msg: &Value,
        cancel: bool,
    ) -> Result<(oneshot::Receiver<Result<Value, UpstreamError>>, Waiting), UpstreamError> {
        let Wire::Stdio {
            out,
            pending,
            askers,
            closed,
            ..
        } = &self.wire
        else {
            return Err(gone("not a stdio upstream"));
        };
        if closed.is_cancelled() {
            return Err(gone("the upstream server exited"));
        }
        let (tx, rx) = oneshot::channel();
        pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        let waiting = Waiting {
            id,
            pending: Arc::clone(pending),
            askers: Arc::clone(askers),
            out: cancel.then(|| out.clone()),
        };
        out.send(msg.to_string())
            .await
            .map_err(|_| gone("the upstream server exited"))?;
        Ok((rx, waiting))
    }

    /// The `_meta` and params of one request in the era spoken, and its message.
    pub(super) fn message(
        &self,
        id: u64,
        method: &str,
        params: Value,
        caps: Option<&Value>,
    ) -> Value {
        let mut params = params;
        if self.is_modern()
            && let Value::Object(p) = &mut params
        {
            p.insert(
                "_meta".into(),
                json!({
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": caps.cloned().unwrap_or_else(|| json!({})),
                    "io.modelcontextprotocol/clientInfo":
                        {"name": "mcp-runtime-proxy", "version": env!("CARGO_PKG_VERSION")},
                }),
            );
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// Starts a request that may bring more than its answer: the upstream's progress and
    /// log messages about it, and (2025-11-25) its requests to us, then its answer, all
    /// from the [`Ongoing`]. `caps`: the client capabilities a 2026-07-28 upstream is
    /// told (what our client can answer).
    pub(crate) async fn start(
        &self,
        method: &str,
        params: Value,
        caps: Option<&Value>,
    ) -> Result<Ongoing, UpstreamError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let name = target_name(&params);
        let mut msg = self.message(id, method, params, caps);
        // Its progress comes back under our request id.
        if let Some(p) = msg["params"].as_object_mut() {
            let meta = p.entry("_meta").or_insert_with(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.insert("progressToken".into(), json!(id));
            }
        }
        let (asks_tx, asks) = mpsc::channel(super::ongoing::ASKS_HELD);
        let (answer_tx, answer) = oneshot::channel::<Result<Value, UpstreamError>>();
        match &self.wire {
            Wire::Stdio { askers, closed, .. } => {
                askers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((id, asks_tx));
                let (rx, waiting) = match self.enqueue(id, &msg, true).await {
                    Ok(sent) => sent,
                    Err(e) => {
                        askers
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .retain(|(n, _)| *n != id);
                        return Err(e);
                    }
                };
                let closed = closed.clone();
                let mut answer_tx = answer_tx;
                // Waits for the answer, or for the [`Ongoing`] to be given up (dropped):
                // either way `waiting` drops at the end, so the call no longer counts as
                // in flight (`route` passes a request or log message on only while one
                // call is), and one given up is cancelled upstream.
                tokio::spawn(async move {
                    let a = tokio::select! {
                        a = rx => a.unwrap_or_else(|_| Err(gone("the upstream server exited"))),
                        () = closed.cancelled() => Err(gone("the upstream server exited")),
                        () = answer_tx.closed() => return,
                    };
                    // No longer in flight once answered, before its caller goes on.
                    drop(waiting);
                    let _ = answer_tx.send(a.and_then(outcome));
                });
            }
            Wire::Http(peer) => {
                let extra = self.param_headers(&msg);
                // The response's head is awaited in the reading task, so the call's
                // patience (silence for `HttpOptions::timeout`) also covers an upstream
                // that took the request and hangs before answering at all.
                let (peer, patience) = (peer.clone(), peer.patience);
                let version = self.version.clone();
                let reading = tokio::spawn(async move {
                    match peer.call(&version, &msg, name.as_deref(), &extra).await {
                        Ok(resp) => {
                            read_events(resp, Some((&peer, &version)), id, asks_tx, answer_tx)
                                .await;
                        }
                        Err(e) => drop(answer_tx.send(Err(e))),
                    }
                });
                let cancel = self
                    .peer(None)
                    .map(|peer| Cancel::Http(Box::new(peer), reading.abort_handle()));
                return Ok(Ongoing {
                    id,
                    asks,
                    answer,
                    cancel,
                    patience: Some(patience),
                });
            }
        }
        Ok(Ongoing {
            id,
            asks,
            answer,
            cancel: None,
            patience: Some(DEFAULT_UPSTREAM_TIMEOUT),
        })
    }

    /// Answers a request the upstream sent (`Ok`: its result; `Err`: a JSON-RPC error).
    pub(crate) async fn respond(
        &self,
        id: Value,
        answer: Result<Value, (i32, String)>,
    ) -> Result<(), UpstreamError> {
        let msg = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        match &self.wire {
            Wire::Stdio { out, .. } => out
                .send(msg.to_string())
                .await
                .map_err(|_| gone("the upstream server exited")),
            Wire::Http(_) => self.post(&msg, None).await.map(drop),
        }
    }

    /// Keeps the `x-mcp-header` parameters of `tools` (the upstream's tool list), for the
    /// headers of later calls.
    pub(super) fn remember_headers(&self, tools: &[Value]) {
        let found = tools.iter().filter_map(|t| {
            let name = t.get("name")?.as_str()?;
            let params = header_params(t.get("inputSchema")?).ok()?;
            (!params.is_empty()).then(|| (name.to_owned(), params))
        });
        *self.headers.lock().unwrap_or_else(|e| e.into_inner()) = found.collect();
    }

    /// The `Mcp-Param-*` headers of `msg` when it is a `tools/call` of a tool with
    /// `x-mcp-header` parameters, written as a conforming client writes them.
    fn param_headers(&self, msg: &Value) -> Vec<(String, String)> {
        if self.version != MODERN || msg.get("method").and_then(Value::as_str) != Some("tools/call")
        {
            return Vec::new();
        }
        let params = &msg["params"];
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Vec::new();
        };
        let headers = self.headers.lock().unwrap_or_else(|e| e.into_inner());
        let Some(wanted) = headers.get(name) else {
            return Vec::new();
        };
        let arguments = params.get("arguments").unwrap_or(&Value::Null);
        param_headers(wanted, arguments)
    }

    /// POSTs one message, with the headers a conforming client sends (the revision's,
    /// and a call's `Mcp-Param-*`: [`Link::param_headers`]); the response, its body
    /// unread.
    async fn send(
        &self,
        msg: &Value,
        name: Option<&str>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, UpstreamError> {
        let Wire::Http(peer) = &self.wire else {
            return Err(gone("not an HTTP upstream"));
        };
        peer.call(&self.version, msg, name, &self.param_headers(msg))
            .await
    }

    /// POSTs one message; the answer to it (JSON, or the first SSE event carrying its
    /// id), if any.
    async fn post(&self, msg: &Value, name: Option<&str>) -> Result<Option<Value>, UpstreamError> {
        let resp = self.send(msg, name).await?;
        let back = match &self.wire {
            Wire::Http(peer) => Some((peer, self.version.as_str())),
            Wire::Stdio { .. } => None,
        };
        answer_in(resp, msg.get("id"), None, back).await
    }
}

/// One line a stdio upstream wrote, as a message; `None` when it is not one (skipped). A
/// line that is not UTF-8 is told at warn, and when it reads as an answer once its bad
/// bytes are replaced, the request it answers fails at once, rather than at its time
/// limit.
fn message(line: &[u8], pending: &Pending) -> Option<Value> {
    if line.trim_ascii().is_empty() {
        return None;
    }
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!(
                "the upstream server wrote a line that is not UTF-8 (at byte {}): skipped",
                e.valid_up_to()
            );
            let lenient = serde_json::from_str::<Value>(&String::from_utf8_lossy(line)).ok();
            if let Some(id) = lenient.as_ref().and_then(answer_id) {
                fail(pending, id, "it answered with a line that is not UTF-8");
            }
            return None;
        }
    };
    let msg = serde_json::from_str::<Value>(text);
    if msg.is_err() {
        tracing::debug!("upstream wrote a line that is not JSON");
    }
    msg.ok()
}

/// A line over [`MAX_MESSAGE`], skipped: told at warn with its size, and when it is an
/// answer whose id its ends show ([`overlong::answer_id`]), its request fails at once;
/// otherwise that request ends at its time limit.
fn too_long(long: &Overlong, pending: &Pending) {
    tracing::warn!(
        "the upstream server wrote a line of {} bytes, over the limit of {MAX_MESSAGE}: skipped",
        long.len
    );
    if let Some(id) = super::overlong::answer_id(&long.head, &long.tail) {
        let why = format!(
            "its answer was {} bytes, over the limit of {MAX_MESSAGE}",
            long.len
        );
        fail(pending, id, &why);
    }
}

/// The id of one of our requests that `msg` answers (it has no `method`).
fn answer_id(msg: &Value) -> Option<u64> {
    if msg.get("method").is_some() {
        return None;
    }
    msg.get("id").and_then(Value::as_u64)
}

/// Ends the stdio request `id`, if it is waiting, with `why` it has no answer.
fn fail(pending: &Pending, id: u64, why: &str) {
    let waiting = pending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id);
    if let Some(tx) = waiting {
        let _ = tx.send(Err(gone(why)));
    }
}

/// A stdio request waiting for its answer: in `pending` (and, for a call, in `askers`)
/// while this lives. Dropped before the answer came (given up: its caller went, or its
/// time ran out), it is taken out of both, and the upstream is told
/// (`notifications/cancelled`) unless `out` is `None`.
struct Waiting {
    id: u64,
    pending: Pending,
    askers: Askers,
    out: Option<mpsc::Sender<String>>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let id = self.id;
        self.askers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(n, _)| *n != id);
        let unanswered = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
            .is_some();
        if unanswered && let Some(out) = &self.out {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "the proxied request was given up"}});
            let _ = out.try_send(note.to_string());
        }
    }
}

/// The params of our `initialize` (a 2025-11-25 upstream's, and again when it lost our
/// session: see `Peer::reopen`). What it may ask during a call passes to our client (who
/// is asked only if it can answer: see `Input::ask`).
pub(super) fn initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
        "clientInfo": {"name": "mcp-runtime-proxy", "version": env!("CARGO_PKG_VERSION")},
    })
}

impl Drop for Link {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}

/// The tool or prompt name, the resource URI or the task id a request is about (`Mcp-Name`).
fn target_name(params: &Value) -> Option<String> {
    params
        .get("name")
        .or_else(|| params.get("uri"))
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// A JSON-RPC error object of the upstream's (an answer's `error`, a failed task's), with
/// `fallback` as its message when it has none.
pub(super) fn rpc_error(e: &Value, fallback: &str) -> UpstreamError {
    UpstreamError::Rpc {
        code: e["code"]
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(-32603),
        message: e["message"].as_str().unwrap_or(fallback).to_owned(),
        data: e.get("data").cloned(),
    }
}

/// The message of an upstream's JSON-RPC error that has none (or one that is not a
/// string).
pub(super) const NO_MESSAGE: &str = "the upstream server's error has no message";

/// An answer's result, or its error (an `error` that is not an object is no JSON-RPC
/// error: the upstream is then unavailable).
pub(super) fn outcome(answer: Value) -> Result<Value, UpstreamError> {
    if let Some(e) = answer.get("error") {
        if !e.is_object() {
            return Err(gone(format!(
                "an error that is not a JSON-RPC error object: {}",
                excerpt(e.to_string().as_bytes())
            )));
        }
        return Err(rpc_error(e, NO_MESSAGE));
    }
    answer
        .get("result")
        .cloned()
        .ok_or_else(|| gone("an answer with neither result nor error"))
}

/// The start of `bytes` (an answer that is not what it should be), to show in an error.
pub(super) fn excerpt(bytes: &[u8]) -> String {
    const SHOWN: usize = 200;
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text.chars().take(SHOWN).collect();
    if text.chars().nth(SHOWN).is_some() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests;

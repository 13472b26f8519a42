//! The client side a proxy needs, once: one request at a time to an upstream MCP server
//! over stdio or Streamable HTTP, in the era it speaks.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// How long one upstream request may take.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest line (or HTTP body) accepted from an upstream.
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

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
            UpstreamError::Timeout => write!(f, "no answer within {DEFAULT_UPSTREAM_TIMEOUT:?}"),
        }
    }
}

impl std::error::Error for UpstreamError {}

fn gone(why: impl fmt::Display) -> UpstreamError {
    UpstreamError::Unavailable(why.to_string())
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A request the upstream sent us during one of our calls (2025-11-25: elicitation,
/// sampling, roots), to be answered with [`Link::respond`].
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    /// Its JSON-RPC id, as it came.
    pub(crate) id: Value,
    /// `{"method": .., "params": ..}`.
    pub(crate) request: Value,
}

/// The calls in flight that take the upstream's requests (stdio: the wire does not say
/// which call a request belongs to, so it goes to the one call in flight).
type Askers = Arc<Mutex<Vec<(u64, mpsc::UnboundedSender<Next>)>>>;

/// Where a message the upstream sent on stdio (not an answer) goes: a request it passes
/// on to the one call in flight; progress to the call whose token it names (our request
/// id); a log message to the one call in flight; the rest as [`unsolicited`]. The reply
/// to send at once, if any.
fn route(msg: &Value, askers: &Askers, changes: &Changes) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str)?;
    let calls = askers.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let only = match calls.as_slice() {
        [(_, tx)] => Some(tx),
        _ => None,
    };
    match (method, msg.get("id")) {
        (m, Some(id)) if passes(m) => {
            let asked = Next::Asked(Asked {
                id: id.clone(),
                request: json!({"method": m, "params": msg["params"]}),
            });
            if only.is_some_and(|tx| tx.send(asked).is_ok()) {
                return None;
            }
            let why = if calls.is_empty() {
                format!("this proxy passes `{m}` on only during a call, to the client that made it")
            } else {
                format!(
                    "`{m}` came while {} calls were in flight, and stdio does not say whose client to ask",
                    calls.len()
                )
            };
            Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}}))
        }
        ("notifications/progress", None) => {
            let token = msg["params"]["progressToken"].as_u64();
            if let Some((_, tx)) = calls.iter().find(|(id, _)| Some(*id) == token) {
                let _ = tx.send(Next::Progress(msg["params"].clone()));
            }
            None
        }
        ("notifications/message", None) => {
            if let Some(tx) = only {
                let _ = tx.send(Next::Log(msg["params"].clone()));
            }
            None
        }
        _ => unsolicited(msg, changes),
    }
}

/// What the upstream sends about our requests and lists, outside of answers.
pub(crate) struct Changes {
    /// Bumped on every `notifications/{tools,prompts,resources}/list_changed`.
    pub(crate) lists: tokio::sync::watch::Sender<u64>,
    /// The URI of every `notifications/resources/updated`.
    pub(crate) updated: tokio::sync::broadcast::Sender<String>,
}

impl Default for Changes {
    fn default() -> Self {
        Changes {
            lists: tokio::sync::watch::Sender::default(),
            updated: tokio::sync::broadcast::channel(256).0,
        }
    }
}

impl Changes {
    fn list_changed(&self) {
        self.lists.send_modify(|n| *n += 1);
    }
}

/// The requests an upstream may send during a call, which this proxy passes to its own
/// client; every other request gets `-32601`.
fn passes(method: &str) -> bool {
    matches!(
        method,
        "elicitation/create" | "sampling/createMessage" | "roots/list"
    )
}

/// One notification or request the upstream sent outside of an answer: list changes are
/// told, requests get the answer they can have (`ping`, or an error).
fn unsolicited(msg: &Value, changes: &Changes) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str)?;
    if method.ends_with("/list_changed") {
        changes.list_changed();
    }
    if method == "notifications/resources/updated"
        && let Some(uri) = msg["params"]["uri"].as_str()
    {
        let _ = changes.updated.send(uri.to_owned());
    }
    let id = msg.get("id")?;
    Some(if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
            "message": format!("this proxy does not serve `{method}` outside of a call")}})
    })
}

enum Wire {
    Stdio {
        out: mpsc::Sender<String>,
        pending: Pending,
        askers: Askers,
        closed: CancellationToken,
        _child: Mutex<Option<tokio::process::Child>>,
    },
    Http {
        url: hyper::Uri,
        client: HttpClient,
        /// What every request carries (`HttpOptions::header`).
        headers: Arc<hyper::HeaderMap>,
        session: Arc<Mutex<Option<String>>>,
    },
}

/// A connection to one upstream, after the era was settled.
pub(crate) struct Link {
    wire: Wire,
    next: AtomicU64,
    /// The revision spoken; `2026-07-28` means every request carries `_meta`.
    version: String,
    /// What `server/discover` or `initialize` said.
    hello: Value,
    changes: Arc<Changes>,
    /// Cancelled when the link goes: its writer and streams end.
    dropped: CancellationToken,
    /// The stream of resource updates asked for (2026-07-28).
    watching: Mutex<Option<Watch>>,
}

/// A `subscriptions/listen` for resource updates: its request id on stdio, its task over
/// HTTP.
enum Watch {
    Stdio(u64),
    Http(tokio::task::AbortHandle),
}

const MODERN: &str = crate::protocol::PROTOCOL_VERSION;

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
                let mut lines = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if line.len() > MAX_MESSAGE {
                        continue;
                    }
                    let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                        tracing::debug!("upstream wrote a line that is not JSON");
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
                        let _ = tx.send(msg);
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
        let wire = Wire::Http {
            url,
            client,
            headers: Arc::new(options.header_map()?),
            session: Arc::default(),
        };
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
        // What it may ask during a call passes to our client (who is asked only if it
        // can answer: see `Input::ask`).
        let init = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
            "clientInfo": {"name": "mcp-runtime-proxy", "version": env!("CARGO_PKG_VERSION")},
        });
        let hello = link.request("initialize", init).await?;
        if let Some(v) = hello["protocolVersion"].as_str() {
            link.version = v.to_owned();
        }
        link.hello = hello;
        link.notify("notifications/initialized").await?;
        tracing::info!(version = %link.version, "connected to a legacy upstream");
        link.listen().await;
        Ok(link)
    }

    /// Opens the stream the upstream tells its list changes on, if it has lists: a
    /// 2026-07-28 `subscriptions/listen` (on stdio, a request left open; on HTTP, a POST
    /// whose event stream stays open), or a 2025-11-25 HTTP upstream's GET stream (on
    /// stdio its notifications come anyway). Over HTTP it is opened again when it ends.
    async fn listen(&self) {
        let caps = self.capabilities();
        if !["tools", "prompts", "resources"]
            .iter()
            .any(|k| caps.contains_key(*k))
        {
            return;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let filter = json!({"notifications": {
            "toolsListChanged": caps.contains_key("tools"),
            "promptsListChanged": caps.contains_key("prompts"),
            "resourcesListChanged": caps.contains_key("resources"),
        }});
        let open = self.message(id, "subscriptions/listen", filter, None);
        match &self.wire {
            Wire::Stdio { out, .. } => {
                if self.is_modern() {
                    // Its answer comes only when it closes; nobody waits for it.
                    let _ = out.send(open.to_string()).await;
                }
            }
            Wire::Http { .. } => {
                let Some(listen) = self.peer(self.is_modern().then_some(open)) else {
                    return;
                };
                let dropped = self.dropped.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = listen.run() => {}
                        () = dropped.cancelled() => {}
                    }
                });
            }
        }
    }

    /// Asks the upstream to tell updates of `uris` (dropping what was asked before, which
    /// was `before`): a 2026-07-28 upstream on a `subscriptions/listen` stream of their
    /// own, a 2025-11-25 one with `resources/subscribe` and `resources/unsubscribe` (when
    /// it offers subscriptions). They come through [`Link::updates`].
    pub(crate) async fn watch_resources(&self, uris: &[String], before: &[String]) {
        if self.is_modern() {
            let previous = self
                .watching
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            match previous {
                Some(Watch::Stdio(id)) => {
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": id}});
                    if let Wire::Stdio { out, .. } = &self.wire {
                        let _ = out.send(note.to_string()).await;
                    }
                }
                Some(Watch::Http(task)) => task.abort(),
                None => {}
            }
            if uris.is_empty() {
                return;
            }
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let filter = json!({"notifications": {"resourceSubscriptions": uris}});
            let open = self.message(id, "subscriptions/listen", filter, None);
            let watch = match &self.wire {
                Wire::Stdio { out, .. } => {
                    let _ = out.send(open.to_string()).await;
                    Watch::Stdio(id)
                }
                Wire::Http { .. } => {
                    let Some(listen) = self.peer(Some(open)) else {
                        return;
                    };
                    let dropped = self.dropped.clone();
                    let task = tokio::spawn(async move {
                        tokio::select! {
                            () = listen.run() => {}
                            () = dropped.cancelled() => {}
                        }
                    });
                    Watch::Http(task.abort_handle())
                }
            };
            *self.watching.lock().unwrap_or_else(|e| e.into_inner()) = Some(watch);
            return;
        }
        if self.hello["capabilities"]["resources"]["subscribe"] != json!(true) {
            return;
        }
        for u in uris.iter().filter(|u| !before.contains(u)) {
            if let Err(e) = self
                .request("resources/subscribe", json!({ "uri": u }))
                .await
            {
                tracing::debug!(uri = %u, "the upstream refused a subscription: {e}");
            }
        }
        for u in before.iter().filter(|u| !uris.contains(u)) {
            let _ = self
                .request("resources/unsubscribe", json!({ "uri": u }))
                .await;
        }
    }

    /// The URIs the upstream says were updated.
    pub(crate) fn updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.changes.updated.subscribe()
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
            Wire::Http { .. } => self.post(&msg, method, None).await.map(drop),
        }
    }

    /// One request; its result.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, UpstreamError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let name = target_name(&params);
        let msg = self.message(id, method, params, None);
        let answer = tokio::time::timeout(DEFAULT_UPSTREAM_TIMEOUT, async {
            match &self.wire {
                Wire::Stdio { closed, .. } => {
                    let rx = self.enqueue(id, &msg).await?;
                    tokio::select! {
                        a = rx => a.map_err(|_| gone("the upstream server exited")),
                        () = closed.cancelled() => Err(gone("the upstream server exited")),
                    }
                }
                Wire::Http { .. } => self
                    .post(&msg, method, name.as_deref())
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
    fn peer(&self, open: Option<Value>) -> Option<Listen> {
        let Wire::Http {
            url,
            client,
            headers,
            session,
        } = &self.wire
        else {
            return None;
        };
        Some(Listen {
            url: url.clone(),
            client: client.clone(),
            headers: Arc::clone(headers),
            session: Arc::clone(session),
            version: self.version.clone(),
            changes: Arc::clone(&self.changes),
            open,
        })
    }

    /// Sends a request on stdio; where its answer will come.
    async fn enqueue(
        &self,
        id: u64,
        msg: &Value,
    ) -> Result<oneshot::Receiver<Value>, UpstreamError> {
        let Wire::Stdio {
            out,
            pending,
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
        out.send(msg.to_string())
            .await
            .map_err(|_| gone("the upstream server exited"))?;
        Ok(rx)
    }

    /// What the upstream says about its lists.
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.lists.subscribe()
    }

    /// The `_meta` and params of one request in the era spoken, and its message.
    fn message(&self, id: u64, method: &str, params: Value, caps: Option<&Value>) -> Value {
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
        let (asks_tx, asks) = mpsc::unbounded_channel();
        let (answer_tx, answer) = oneshot::channel::<Result<Value, UpstreamError>>();
        match &self.wire {
            Wire::Stdio { askers, closed, .. } => {
                askers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((id, asks_tx));
                let rx = match self.enqueue(id, &msg).await {
                    Ok(rx) => rx,
                    Err(e) => {
                        askers
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .retain(|(n, _)| *n != id);
                        return Err(e);
                    }
                };
                let (closed, askers) = (closed.clone(), Arc::clone(askers));
                tokio::spawn(async move {
                    let a = tokio::select! {
                        a = rx => a.map_err(|_| gone("the upstream server exited")),
                        () = closed.cancelled() => Err(gone("the upstream server exited")),
                    };
                    askers
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .retain(|(n, _)| *n != id);
                    let _ = answer_tx.send(a.and_then(outcome));
                });
            }
            Wire::Http { .. } => {
                let resp = self.send(&msg, method, name.as_deref()).await?;
                let reading = tokio::spawn(read_events(resp, id, asks_tx, answer_tx));
                let cancel = self
                    .peer(None)
                    .map(|peer| Cancel::Http(Box::new(peer), reading.abort_handle()));
                return Ok(Ongoing {
                    id,
                    asks,
                    answer,
                    cancel,
                });
            }
        }
        let cancel = match &self.wire {
            Wire::Stdio { out, .. } => Some(Cancel::Stdio(out.clone())),
            Wire::Http { .. } => None,
        };
        Ok(Ongoing {
            id,
            asks,
            answer,
            cancel,
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
            Wire::Http { .. } => self.post(&msg, "", None).await.map(drop),
        }
    }
    /// POSTs one message; the response, its body unread.
    async fn send(
        &self,
        msg: &Value,
        method: &str,
        name: Option<&str>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, UpstreamError> {
        let Wire::Http {
            url,
            client,
            headers,
            session,
            ..
        } = &self.wire
        else {
            return Err(gone("not an HTTP upstream"));
        };
        let mut req = with_headers(hyper::Request::post(url.clone()), headers)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", self.version.as_str());
        if self.is_modern() {
            req = req.header("mcp-method", method);
            if let Some(n) = name.filter(|n| n.is_ascii() && !n.contains(['\r', '\n'])) {
                req = req.header("mcp-name", n);
            }
        }
        let sid = session.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(s) = sid {
            req = req.header("mcp-session-id", s);
        }
        let req = req
            .body(Full::new(Bytes::from(msg.to_string())))
            .map_err(gone)?;
        let resp = client
            .request(req)
            .await
            .map_err(|e| gone(format!("cannot reach it: {}", causes(&e))))?;
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            *session.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.to_owned());
        }
        Ok(resp)
    }

    /// POSTs one message; the answer to it (JSON, or the matching SSE event), if any.
    async fn post(
        &self,
        msg: &Value,
        method: &str,
        name: Option<&str>,
    ) -> Result<Option<Value>, UpstreamError> {
        let resp = self.send(msg, method, name).await?;
        let status = resp.status();
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let body = http_body_util::Limited::new(resp.into_body(), MAX_MESSAGE)
            .collect()
            .await
            .map_err(|e| gone(format!("reading its answer: {e}")))?
            .to_bytes();
        if status.as_u16() == 202 || (body.is_empty() && status.is_success()) {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&body);
        let id = msg.get("id");
        let parsed = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|v| v.get("id") == id)
        } else {
            serde_json::from_str::<Value>(&text).ok()
        };
        match parsed {
            Some(v) => Ok(Some(v)),
            None if !status.is_success() => Err(gone(format!(
                "HTTP {status}: {}",
                text.chars().take(200).collect::<String>()
            ))),
            None => Err(gone("an answer that is not JSON-RPC")),
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}

type HttpClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// A request to an HTTP upstream with its fixed headers.
fn with_headers(
    mut req: hyper::http::request::Builder,
    headers: &hyper::HeaderMap,
) -> hyper::http::request::Builder {
    if let Some(h) = req.headers_mut() {
        h.extend(headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    req
}

/// Where an HTTP upstream tells its list changes: the 2026-07-28 `subscriptions/listen`
/// stream (`open`), or a 2025-11-25 upstream's GET stream, where its requests outside
/// of calls come too (answered: `ping`, or an error).
#[derive(Clone)]
struct Listen {
    url: hyper::Uri,
    client: HttpClient,
    headers: Arc<hyper::HeaderMap>,
    session: Arc<Mutex<Option<String>>>,
    version: String,
    changes: Arc<Changes>,
    /// The `subscriptions/listen` request (2026-07-28); `None`: the GET stream.
    open: Option<Value>,
}

impl Listen {
    /// Keeps the stream open: opened again after it ends, waiting longer each time it
    /// fails at once; given up when the upstream has none (`405`, or an error answer).
    async fn run(self) {
        let mut backoff = Duration::from_millis(500);
        loop {
            let started = std::time::Instant::now();
            if !self.once().await {
                return;
            }
            if started.elapsed() > Duration::from_secs(30) {
                backoff = Duration::from_millis(500);
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(30));
        }
    }

    /// One stream, read to its end; `false` when there is no such stream to open.
    async fn once(&self) -> bool {
        let sid = self
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut req = match &self.open {
            Some(_) => with_headers(hyper::Request::post(self.url.clone()), &self.headers)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-method", "subscriptions/listen"),
            None => with_headers(hyper::Request::get(self.url.clone()), &self.headers)
                .header("accept", "text/event-stream"),
        }
        .header("mcp-protocol-version", self.version.as_str());
        if let Some(s) = &sid {
            req = req.header("mcp-session-id", s.as_str());
        }
        let body = self.open.as_ref().map(Value::to_string).unwrap_or_default();
        let Ok(req) = req.body(Full::new(Bytes::from(body))) else {
            return false;
        };
        let resp = match self.client.request(req).await {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => {
                tracing::debug!(status = %r.status(), "the upstream has no change stream");
                return false;
            }
            Err(e) => {
                tracing::debug!("the upstream's change stream: {}", causes(&e));
                return true;
            }
        };
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if !sse {
            // An answer at once (an error): it does not listen.
            return false;
        }
        let mut body = resp.into_body();
        let mut buf = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            buf.extend_from_slice(&data);
            if buf.len() > MAX_MESSAGE {
                return true;
            }
            while let Some(event) = take_event(&mut buf) {
                let Ok(msg) = serde_json::from_str::<Value>(&event) else {
                    continue;
                };
                if let Some(reply) = unsolicited(&msg, &self.changes) {
                    self.reply(&reply, sid.as_deref()).await;
                }
            }
        }
        true
    }

    async fn reply(&self, msg: &Value, sid: Option<&str>) {
        let mut req = with_headers(hyper::Request::post(self.url.clone()), &self.headers)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", self.version.as_str());
        if self.version == MODERN
            && let Some(m) = msg.get("method").and_then(Value::as_str)
        {
            req = req.header("mcp-method", m);
        }
        if let Some(s) = sid {
            req = req.header("mcp-session-id", s);
        }
        if let Ok(req) = req.body(Full::new(Bytes::from(msg.to_string()))) {
            let _ = self.client.request(req).await;
        }
    }
}

/// The tool or prompt name, or the resource URI, a request is about (`Mcp-Name`).
fn target_name(params: &Value) -> Option<String> {
    params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// An error with its causes (`client error (Connect): invalid peer certificate: ..`).
fn causes(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(c) = next {
        let c_text = c.to_string();
        if !out.contains(&c_text) {
            out.push_str(": ");
            out.push_str(&c_text);
        }
        next = c.source();
    }
    out
}

/// An answer's result, or its error.
fn outcome(answer: Value) -> Result<Value, UpstreamError> {
    if let Some(e) = answer.get("error") {
        return Err(UpstreamError::Rpc {
            code: e["code"]
                .as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .unwrap_or(-32603),
            message: e["message"].as_str().unwrap_or_default().to_owned(),
            data: e.get("data").cloned(),
        });
    }
    answer
        .get("result")
        .cloned()
        .ok_or_else(|| gone("an answer with neither result nor error"))
}

/// What an [`Ongoing`] request brings next.
#[derive(Debug)]
pub(crate) enum Next {
    /// The upstream asks us something first.
    Asked(Asked),
    /// Its progress (`notifications/progress` params).
    Progress(Value),
    /// A log message about it (`notifications/message` params).
    Log(Value),
    /// Its answer.
    Answer(Result<Value, UpstreamError>),
}

/// A request sent whose upstream may ask things before it answers. Dropped before its
/// answer, it is cancelled upstream (`notifications/cancelled`).
pub(crate) struct Ongoing {
    id: u64,
    asks: mpsc::UnboundedReceiver<Next>,
    answer: oneshot::Receiver<Result<Value, UpstreamError>>,
    cancel: Option<Cancel>,
}

/// How a request given up on is cancelled upstream.
enum Cancel {
    /// A line on its stdin.
    Stdio(mpsc::Sender<String>),
    /// A POST, and the end of the read of its event stream.
    Http(Box<Listen>, tokio::task::AbortHandle),
}

impl Ongoing {
    /// The next question, or the answer; [`UpstreamError::Timeout`] when neither comes
    /// within [`DEFAULT_UPSTREAM_TIMEOUT`].
    pub(crate) async fn next(&mut self) -> Next {
        let next = tokio::time::timeout(DEFAULT_UPSTREAM_TIMEOUT, async {
            tokio::select! {
                biased;
                Some(n) = self.asks.recv() => n,
                a = &mut self.answer => Next::Answer(
                    a.unwrap_or_else(|_| Err(gone("the upstream server went away")))),
            }
        })
        .await;
        match next {
            Ok(Next::Answer(a)) => {
                self.cancel = None;
                Next::Answer(a)
            }
            Ok(asked) => asked,
            Err(_) => Next::Answer(Err(UpstreamError::Timeout)),
        }
    }
}

impl Drop for Ongoing {
    fn drop(&mut self) {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": self.id, "reason": "the proxied call was given up"}});
        match self.cancel.take() {
            Some(Cancel::Stdio(out)) => {
                let _ = out.try_send(note.to_string());
            }
            Some(Cancel::Http(peer, reading)) => {
                reading.abort();
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    rt.spawn(async move {
                        let sid = peer
                            .session
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .clone();
                        peer.reply(&note, sid.as_deref()).await;
                    });
                }
            }
            None => {}
        }
    }
}

/// Reads the response to a POSTed request as it comes: JSON, or an SSE stream on which
/// the upstream's requests about it come before its answer.
async fn read_events(
    resp: hyper::Response<hyper::body::Incoming>,
    id: u64,
    asks: mpsc::UnboundedSender<Next>,
    answer: oneshot::Sender<Result<Value, UpstreamError>>,
) {
    let status = resp.status();
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let mut body = resp.into_body();
    if !sse {
        let got = http_body_util::Limited::new(body, MAX_MESSAGE)
            .collect()
            .await
            .map_err(|e| gone(format!("reading its answer: {e}")))
            .and_then(|b| {
                serde_json::from_slice::<Value>(&b.to_bytes())
                    .map_err(|_| gone(format!("HTTP {status} with an answer that is not JSON-RPC")))
            });
        let _ = answer.send(got.and_then(outcome));
        return;
    }
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let frame = match body.frame().await {
            Some(Ok(f)) => f,
            Some(Err(e)) => {
                let _ = answer.send(Err(gone(format!("its event stream broke: {e}"))));
                return;
            }
            None => {
                let _ = answer.send(Err(gone("its event stream ended with no answer")));
                return;
            }
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        buf.extend_from_slice(&data);
        if buf.len() > MAX_MESSAGE {
            let _ = answer.send(Err(gone("an event larger than the limit")));
            return;
        }
        while let Some(event) = take_event(&mut buf) {
            let Ok(msg) = serde_json::from_str::<Value>(&event) else {
                continue;
            };
            match msg.get("method").and_then(Value::as_str) {
                // What comes on this stream is about this call.
                Some(method) => {
                    let next = match (method, msg.get("id")) {
                        (m, Some(rid)) => Next::Asked(Asked {
                            id: rid.clone(),
                            request: json!({"method": m, "params": msg["params"]}),
                        }),
                        ("notifications/progress", None) => Next::Progress(msg["params"].clone()),
                        ("notifications/message", None) => Next::Log(msg["params"].clone()),
                        _ => continue,
                    };
                    let _ = asks.send(next);
                }
                None if msg.get("id").and_then(Value::as_u64) == Some(id) => {
                    let _ = answer.send(outcome(msg));
                    return;
                }
                None => {}
            }
        }
    }
}

/// The data of the first whole SSE event in `buf` (taken out of it), if there is one.
fn take_event(buf: &mut Vec<u8>) -> Option<String> {
    loop {
        let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
        let crlf = buf
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|i| (i, 4));
        let end = match (lf, crlf) {
            (Some(a), Some(b)) => std::cmp::min(a, b),
            (a, b) => a.or(b)?,
        };
        let raw: Vec<u8> = buf.drain(..end.0 + end.1).collect();
        let text = String::from_utf8_lossy(&raw);
        let data: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if !data.is_empty() {
            return Some(data.join("\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::take_event;

    #[test]
    fn events_are_cut_at_blank_lines_in_either_line_ending() {
        let mut buf =
            b"id: 1\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: x\r\ndata: y\r\n\r\ndata: par"
                .to_vec();
        assert_eq!(take_event(&mut buf).as_deref(), Some("{\"a\":1}"));
        assert_eq!(take_event(&mut buf).as_deref(), Some("x\ny"));
        assert_eq!(take_event(&mut buf), None);
        assert_eq!(buf, b"data: par");
    }
}

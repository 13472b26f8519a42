//! The client side a proxy needs, once: the connection to one upstream MCP server (a child
//! on stdio, an in-process pipe, or Streamable HTTP), the era it speaks settled, and the
//! requests and answers sent to it, many at a time. The stdio wire is in `stdio.rs` (one
//! run of the child; the child's process is started and watched by `child.rs`), a child
//! that exited is started again by `respawn.rs`, and what an answer means is in
//! `answer.rs`.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::ongoing::{Cancel, Ongoing};
use super::posted::{answer_in, read_events};
use super::routing::Changes;
use super::streams::{Listen, Peer};
use super::watch::Watch;
use crate::protocol::headers::{HeaderParam, header_params, param_headers};

mod answer;
mod child;
mod handshake;
mod respawn;
mod stdin;
mod stdio;
mod told;
mod unreached;

pub use answer::UpstreamError;
pub(crate) use answer::{NO_MESSAGE, excerpt, gone, outcome, rpc_error, shape};
use handshake::{compose, era, initialized};
pub(super) use handshake::{handshake_on, initialize_params};

pub(crate) use child::spawn;
pub(crate) use respawn::Spawn;
pub(super) use respawn::Stdio;
pub(crate) use stdio::{Pipes, Session, id_in_string};
pub(crate) use told::{Told, shown_url};
pub(crate) use unreached::{unreached, unsent};

/// How long one upstream request may take, unless its upstream's options say otherwise
/// ([`HttpOptions::timeout`](super::HttpOptions::timeout),
/// [`StdioOptions::timeout`](super::StdioOptions::timeout)).
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest line (or HTTP body) accepted from an upstream.
pub(super) const MAX_MESSAGE: usize = 16 * 1024 * 1024;

pub(super) enum Wire {
    Stdio(Stdio),
    Http(Box<Peer>),
}

/// A connection to one upstream, after the era was settled.
pub(crate) struct Link {
    pub(super) wire: Wire,
    pub(super) next: Arc<AtomicU64>,
    /// The revision spoken; `2026-07-28` means every request carries `_meta`. A stdio
    /// child started again must speak it too.
    pub(super) version: String,
    /// What `server/discover` or `initialize` said (last: a stdio child started again
    /// says it again).
    pub(super) hello: RwLock<Value>,
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
    /// Newline-delimited JSON-RPC with the child (or pipe) of `first`, started again
    /// with `again` when it ends (if given); `program` names it in logs, `patience` is
    /// how long it may stay silent on a request, and `stall` how long a write to its
    /// stdin may make no progress before it is taken for gone.
    pub(crate) async fn stdio(
        first: Pipes,
        again: Option<Spawn>,
        program: String,
        patience: Duration,
        stall: Duration,
    ) -> Result<Link, UpstreamError> {
        let (changes, dropped) = (Arc::new(Changes::default()), CancellationToken::new());
        let session = Session::open(first, &changes, &dropped, &program, Some(stall));
        let wire = Wire::Stdio(Stdio::new(session, again, patience, Some(stall), program));
        Self::settle(wire, changes, dropped).await
    }

    /// Newline-delimited JSON-RPC over `read` and `write` (an in-process pipe); `dropped`
    /// is cancelled when the link goes. Its writes have no stall limit: the server at its
    /// other end runs in this process, and there is nothing to start again.
    pub(crate) async fn pipes<R, W>(
        read: R,
        write: W,
        dropped: CancellationToken,
    ) -> Result<Link, UpstreamError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let changes = Arc::new(Changes::default());
        let pipes = Pipes {
            read: Box::new(read),
            write: Box::new(write),
            child: None,
        };
        let session = Session::open(pipes, &changes, &dropped, "local", None);
        let patience = DEFAULT_UPSTREAM_TIMEOUT;
        let wire = Wire::Stdio(Stdio::new(session, None, patience, None, "local".into()));
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
        let told = Arc::new(Told::new(shown_url(&url)));
        let wire = Wire::Http(Box::new(Peer {
            url,
            told,
            client,
            headers: Arc::new(options.header_map()?),
            session: Arc::default(),
            reopening: Arc::default(),
            patience: options.patience()?,
        }));
        Self::settle(wire, Arc::default(), CancellationToken::new()).await
    }

    /// The link over `wire`, its era settled ([`Link::handshake`]).
    async fn settle(
        wire: Wire,
        changes: Arc<Changes>,
        dropped: CancellationToken,
    ) -> Result<Link, UpstreamError> {
        let mut link = Link {
            wire,
            next: Arc::new(AtomicU64::new(1)),
            version: MODERN.to_owned(),
            hello: RwLock::new(Value::Null),
            changes,
            dropped,
            watching: Mutex::new(None),
            headers: Mutex::default(),
        };
        let first = link.live();
        let (version, hello) = link.handshake(first.as_ref()).await?;
        if version != MODERN {
            tracing::info!(version = %version, "connected to a legacy upstream");
        }
        link.version = version;
        link.hello = RwLock::new(hello);
        link.listen(first.as_ref()).await;
        Ok(link)
    }

    /// Finds the era, on the stdio session `on` (the child as started; `None` over HTTP):
    /// `server/discover` first; `initialize` when it is not known. The revision, and what
    /// the upstream said.
    pub(super) async fn handshake(
        &self,
        on: Option<&Arc<Session>>,
    ) -> Result<(String, Value), UpstreamError> {
        match (&self.wire, on) {
            (Wire::Stdio(_), Some(session)) => {
                handshake_on(session, &self.next, self.patience()).await
            }
            (Wire::Stdio(_), None) => Err(gone("no stdio session")),
            (Wire::Http(peer), _) => {
                // Each in the revision it belongs to (its `MCP-Protocol-Version`).
                let ask = |version: &'static str, method: &'static str, params: Value| async move {
                    let id = self.next.fetch_add(1, Ordering::Relaxed);
                    let msg = compose(version == MODERN, id, method, params, None);
                    let asked = async {
                        self.post_as(version, &msg, None)
                            .await?
                            .ok_or_else(|| gone("no answer"))
                    };
                    tokio::time::timeout(self.patience(), asked)
                        .await
                        .map_err(|_| UpstreamError::Timeout)?
                        .and_then(|a| outcome(a, &peer.told))
                };
                let (version, hello, legacy) = era(ask).await?;
                if legacy {
                    // Within the time limit too: an upstream may keep its response open.
                    let initialized = initialized();
                    let told = self.post_as(&version, &initialized, None);
                    drop(
                        tokio::time::timeout(self.patience(), told)
                            .await
                            .map_err(|_| UpstreamError::Timeout)??,
                    );
                }
                Ok((version, hello))
            }
        }
    }

    /// Says where the upstream is mounted (`mounts`, innermost first, as a call through
    /// it sees them), for what its logs tell ([`Told::mounted`]): on stdio, to the run of
    /// the child now (a child started again hears it on its next call).
    pub(crate) fn mounted(&self, mounts: Option<&[String]>) {
        match &self.wire {
            Wire::Http(peer) => peer.told.mounted(mounts),
            Wire::Stdio(stdio) => stdio.now().told.mounted(mounts),
        }
    }

    /// Tells `what` the upstream said wrong to the log ([`Told::tell`]).
    pub(crate) fn tell(&self, what: impl std::fmt::Display) {
        match &self.wire {
            Wire::Http(peer) => peer.told.tell(what),
            Wire::Stdio(stdio) => stdio.now().told.tell(what),
        }
    }

    /// `answer`, a result of the upstream's (`what`: "a tool result", say), read as `T`.
    /// One of the wrong shape is an execution error that says what is wrong in it, never
    /// what it holds ([`shape`]): serde's message and an excerpt of the answer go to the
    /// log, naming the upstream.
    pub(crate) fn read_as<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        answer: &Value,
    ) -> Result<T, crate::Error> {
        T::deserialize(answer).map_err(|e| {
            self.tell(format_args!(
                "the upstream server answered {what} that is not valid ({e}): {}",
                excerpt(answer.to_string().as_bytes())
            ));
            crate::Error::new(format!(
                "the upstream server's answer was not valid: {}",
                shape(&e)
            ))
        })
    }

    pub(crate) fn version(&self) -> &str {
        &self.version
    }
    pub(crate) fn capabilities(&self) -> Map<String, Value> {
        self.hello.read().unwrap_or_else(|e| e.into_inner())["capabilities"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    }
    pub(crate) fn server_info(&self) -> Value {
        let hello = self.hello.read().unwrap_or_else(|e| e.into_inner());
        let modern = &hello["_meta"]["io.modelcontextprotocol/serverInfo"];
        if modern.is_object() {
            modern.clone()
        } else {
            hello["serverInfo"].clone()
        }
    }
    pub(crate) fn instructions(&self) -> Option<String> {
        self.hello.read().unwrap_or_else(|e| e.into_inner())["instructions"]
            .as_str()
            .map(str::to_owned)
    }

    pub(crate) fn is_modern(&self) -> bool {
        self.version == MODERN
    }

    /// How long the upstream may stay silent on a request.
    pub(crate) fn patience(&self) -> Duration {
        match &self.wire {
            Wire::Http(peer) => peer.patience,
            Wire::Stdio(stdio) => stdio.patience,
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
    /// tasks extension, which every `tasks/*` request must declare); its result. On
    /// stdio, a child that exited is started again first ([`Link::session`]).
    pub(crate) async fn request_with(
        &self,
        method: &str,
        params: Value,
        caps: Option<&Value>,
    ) -> Result<Value, UpstreamError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let name = target_name(&params);
        let msg = self.message(id, method, params, caps);
        let (version, request) = (&self.version, (id, method));
        // A child started again first: that too within the request's time limit.
        let ready = AtomicBool::new(false);
        let asked = async {
            let on = match &self.wire {
                Wire::Stdio(_) => Some(self.session().await?),
                Wire::Http(_) => None,
            };
            ready.store(true, Ordering::Relaxed);
            self.exchange(on.as_ref(), version, request, &msg, name.as_deref())
                .await
        };
        tokio::time::timeout(self.patience(), asked)
            .await
            .map_err(|_| self.timed_out(ready.load(Ordering::Relaxed)))?
    }

    /// The error of a request whose time ran out: [`UpstreamError::Timeout`] once it was
    /// sent (`sent`), else that its upstream was still being started again.
    fn timed_out(&self, sent: bool) -> UpstreamError {
        if sent {
            return UpstreamError::Timeout;
        }
        gone(format!(
            "the upstream server was being started again, and was not ready within the request's time limit ({} s)",
            self.patience().as_secs_f64()
        ))
    }

    /// Sends `msg` (the request `id`, `method`) on the stdio session `on` (which must be
    /// given on stdio), or POSTs it in `version`; its result, or why there is none
    /// ([`outcome`]). Given up on stdio (its time ran out, or the caller went), it is
    /// forgotten and cancelled upstream.
    async fn exchange(
        &self,
        on: Option<&Arc<Session>>,
        version: &str,
        (id, method): (u64, &str),
        msg: &Value,
        name: Option<&str>,
    ) -> Result<Value, UpstreamError> {
        match (&self.wire, on) {
            (Wire::Stdio(_), Some(session)) => {
                // A poll is not a request the upstream's questions may be about.
                let poll = method == "tasks/get";
                let lock = || session.polls.lock().unwrap_or_else(|e| e.into_inner());
                if poll {
                    lock().insert(id);
                }
                let answer = session.exchange(id, msg, method != "initialize").await;
                if poll {
                    lock().remove(&id);
                }
                answer.and_then(|a| outcome(a, &session.told))
            }
            (Wire::Stdio(_), None) => Err(gone("no stdio session")),
            (Wire::Http(peer), _) => {
                let mut unanswered = CancelUnanswered {
                    upstream: self.peer(None).filter(|_| method != "initialize"),
                    id,
                };
                let posted = self.post_as(version, msg, name).await;
                unanswered.upstream = None;
                posted?
                    .ok_or_else(|| gone("no answer"))
                    .and_then(|a| outcome(a, &peer.told))
            }
        }
    }

    /// An HTTP upstream's change stream (`open`: the `subscriptions/listen` request; `None`:
    /// the GET stream), also what posts our notifications to it.
    pub(super) fn peer(&self, open: Option<Value>) -> Option<Listen> {
        let Wire::Http(peer) = &self.wire else {
            return None;
        };
        Some(Listen {
            peer: Peer::clone(peer),
            version: self.version.clone(),
            changes: Arc::clone(&self.changes),
            open,
        })
    }

    /// The `_meta` and params of one request in the era spoken, and its message.
    pub(super) fn message(
        &self,
        id: u64,
        method: &str,
        params: Value,
        caps: Option<&Value>,
    ) -> Value {
        compose(self.is_modern(), id, method, params, caps)
    }

    /// Starts a request that may bring more than its answer: the upstream's progress and
    /// log messages about it, and (2025-11-25) its requests to us, then its answer, all
    /// from the [`Ongoing`]. `caps`: the client capabilities a 2026-07-28 upstream is
    /// told (what our client can answer). On stdio, a child that exited is started again
    /// first.
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
        let patience = self.patience();
        match &self.wire {
            Wire::Stdio(_) => {
                // A child started again first, within the call's time limit.
                let session = tokio::time::timeout(patience, self.session())
                    .await
                    .map_err(|_| self.timed_out(false))??;
                session
                    .askers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((id, asks_tx));
                let (rx, waiting) = match session.enqueue(id, &msg, true).await {
                    Ok(sent) => sent,
                    Err(e) => {
                        session
                            .askers
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .retain(|(n, _)| *n != id);
                        return Err(e);
                    }
                };
                let mut answer_tx = answer_tx;
                // Waits for the answer, or for the [`Ongoing`] to be given up (dropped):
                // either way `waiting` drops at the end, so the call no longer counts as
                // in flight (`route` passes a request or log message on only while one
                // call is), and one given up is cancelled upstream.
                tokio::spawn(async move {
                    let a = tokio::select! {
                        a = rx => a.unwrap_or_else(|_| Err(session.gone())),
                        () = session.closed.cancelled() => Err(session.gone()),
                        () = answer_tx.closed() => return,
                    };
                    // No longer in flight once answered, before its caller goes on.
                    drop(waiting);
                    let _ = answer_tx.send(a.and_then(|a| outcome(a, &session.told)));
                });
            }
            Wire::Http(peer) => {
                let extra = self.param_headers(&msg);
                // The response's head is awaited in the reading task, so the call's
                // patience (silence for `HttpOptions::timeout`) also covers an upstream
                // that took the request and hangs before answering at all.
                let peer = Peer::clone(peer);
                let version = self.version.clone();
                let reading = tokio::spawn(async move {
                    match peer.call(&version, &msg, name.as_deref(), &extra).await {
                        Ok(resp) => {
                            read_events(&peer, &version, resp, id, asks_tx, answer_tx).await;
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
            patience: Some(patience),
        })
    }

    /// Answers `asked`, a request the upstream sent (`Ok`: its result; `Err`: a JSON-RPC
    /// error). On stdio, it goes to the run of the child that asked: if that one ended,
    /// nowhere (the error says it is gone).
    pub(crate) async fn respond(
        &self,
        asked: super::routing::Asked,
        answer: Result<Value, (i32, String)>,
    ) -> Result<(), UpstreamError> {
        let id = asked.id;
        let msg = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        match &self.wire {
            Wire::Stdio(_) => match asked.from.as_ref().and_then(std::sync::Weak::upgrade) {
                Some(session) => session.send(msg.to_string()).await,
                None => Err(gone(
                    "the upstream server exited (its run that asked ended)",
                )),
            },
            // Within the time limit: an upstream may never take it (no response, or
            // one left open), and the call waiting on it must not wait for ever.
            Wire::Http(peer) => tokio::time::timeout(peer.patience, self.post(&msg, None))
                .await
                .map_err(|_| UpstreamError::Timeout)?
                .map(drop),
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

    /// POSTs one message in the revision spoken; the answer to it (JSON, or the first
    /// SSE event carrying its id), if any.
    async fn post(&self, msg: &Value, name: Option<&str>) -> Result<Option<Value>, UpstreamError> {
        self.post_as(&self.version, msg, name).await
    }

    /// POSTs one message, with the headers a conforming client sends in `version` (the
    /// revision's, and a call's `Mcp-Param-*`: [`Link::param_headers`]); the answer to it
    /// (JSON, or the first SSE event carrying its id), if any.
    async fn post_as(
        &self,
        version: &str,
        msg: &Value,
        name: Option<&str>,
    ) -> Result<Option<Value>, UpstreamError> {
        let Wire::Http(peer) = &self.wire else {
            return Err(gone("not an HTTP upstream"));
        };
        let resp = peer
            .call(version, msg, name, &self.param_headers(msg))
            .await?;
        answer_in(peer, resp, msg.get("id"), None, Some(version)).await
    }
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

#[cfg(test)]
mod child_tests;
#[cfg(test)]
mod restart_tests;
#[cfg(test)]
mod tests;

/// A request POSTed to an HTTP upstream, until its answer came: given up before that (its
/// time ran out, or its caller went), it is cancelled upstream ([`Listen::cancel_later`]),
/// as a call is ([`Ongoing`]'s drop). `upstream`: `None` once answered (and for
/// `initialize`, which is never cancelled).
struct CancelUnanswered {
    upstream: Option<Listen>,
    id: u64,
}

impl Drop for CancelUnanswered {
    fn drop(&mut self) {
        if let Some(upstream) = self.upstream.take() {
            upstream.cancel_later(self.id, "the proxied request was given up");
        }
    }
}

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

enum Wire {
    Stdio {
        out: mpsc::Sender<String>,
        pending: Pending,
        closed: CancellationToken,
        _child: Mutex<tokio::process::Child>,
    },
    Http {
        url: hyper::Uri,
        client: hyper_util::client::legacy::Client<
            hyper_util::client::legacy::connect::HttpConnector,
            Full<Bytes>,
        >,
        session: Mutex<Option<String>>,
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
        let (out, mut queue) = mpsc::channel::<String>(256);
        let pending: Pending = Arc::default();
        let closed = CancellationToken::new();
        // Writer: one line per message.
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(line) = queue.recv().await {
                if stdin.write_all(line.as_bytes()).await.is_err()
                    || stdin.write_all(b"\n").await.is_err()
                    || stdin.flush().await.is_err()
                {
                    return;
                }
            }
        });
        // Reader: answers go to their request; requests of the server get an error (this
        // client declares no capabilities); notifications are dropped.
        {
            let (pending, closed, out) = (Arc::clone(&pending), closed.clone(), out.clone());
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
                    let id = msg.get("id").cloned();
                    if msg.get("method").is_some() {
                        if let Some(id) = id {
                            let reply = json!({"jsonrpc": "2.0", "id": id, "error": {
                                "code": -32601, "message": "this proxy serves no requests"}});
                            let _ = out.send(reply.to_string()).await;
                        }
                        continue;
                    }
                    let Some(n) = id.as_ref().and_then(Value::as_u64) else {
                        continue;
                    };
                    let waiting = pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&n);
                    if let Some(tx) = waiting {
                        let _ = tx.send(msg);
                    }
                }
                closed.cancel();
                pending.lock().unwrap_or_else(|e| e.into_inner()).clear();
                tracing::warn!("the upstream server closed its stdout");
            });
        }
        let wire = Wire::Stdio {
            out,
            pending,
            closed,
            _child: Mutex::new(child),
        };
        Self::settle(wire).await
    }

    pub(crate) async fn http(url: &str) -> Result<Link, UpstreamError> {
        let url: hyper::Uri = url
            .parse()
            .map_err(|e| gone(format!("bad URL `{url}`: {e}")))?;
        if url.scheme_str() != Some("http") {
            return Err(gone("only http:// upstreams are supported"));
        }
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http();
        let wire = Wire::Http {
            url,
            client,
            session: Mutex::new(None),
        };
        Self::settle(wire).await
    }

    /// Finds the era: `server/discover` first; `initialize` when it is not known.
    async fn settle(wire: Wire) -> Result<Link, UpstreamError> {
        let mut link = Link {
            wire,
            next: AtomicU64::new(1),
            version: MODERN.to_owned(),
            hello: Value::Null,
        };
        match link.request("server/discover", json!({})).await {
            Ok(d)
                if d["supportedVersions"]
                    .as_array()
                    .is_some_and(|v| v.iter().any(|x| x == MODERN)) =>
            {
                link.hello = d;
                return Ok(link);
            }
            Ok(_) | Err(UpstreamError::Rpc { .. }) => {}
            Err(e) => return Err(e),
        }
        link.version = "2025-11-25".to_owned();
        let init = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-runtime-proxy", "version": env!("CARGO_PKG_VERSION")},
        });
        let hello = link.request("initialize", init).await?;
        if let Some(v) = hello["protocolVersion"].as_str() {
            link.version = v.to_owned();
        }
        link.hello = hello;
        link.notify("notifications/initialized").await?;
        tracing::info!(version = %link.version, "connected to a legacy upstream");
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

    fn is_modern(&self) -> bool {
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
        let mut params = params;
        if self.is_modern()
            && let Value::Object(p) = &mut params
        {
            p.insert(
                "_meta".into(),
                json!({
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo":
                        {"name": "mcp-runtime-proxy", "version": env!("CARGO_PKG_VERSION")},
                }),
            );
        }
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = tokio::time::timeout(DEFAULT_UPSTREAM_TIMEOUT, async {
            match &self.wire {
                Wire::Stdio {
                    out,
                    pending,
                    closed,
                    ..
                } => {
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

    /// POSTs one message; the answer to it (JSON, or the matching SSE event), if any.
    async fn post(
        &self,
        msg: &Value,
        method: &str,
        name: Option<&str>,
    ) -> Result<Option<Value>, UpstreamError> {
        let Wire::Http {
            url,
            client,
            session,
        } = &self.wire
        else {
            return Err(gone("not an HTTP upstream"));
        };
        let mut req = hyper::Request::post(url.clone())
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
            .map_err(|e| gone(format!("cannot reach it: {e}")))?;
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            *session.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.to_owned());
        }
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
        if status.as_u16() == 202 || body.is_empty() {
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

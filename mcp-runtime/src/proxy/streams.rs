//! The HTTP side of an upstream: its change streams (`subscriptions/listen`, or the
//! legacy GET stream) and the event stream of one POSTed request, read as they come.

use super::link::{MAX_MESSAGE, MODERN, UpstreamError, gone, outcome};
use super::ongoing::Next;
use super::routing::{Asked, Changes, unsolicited};
use crate::protocol::headers::encode_header_value;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

pub(super) type HttpClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// An HTTP upstream: where it is, and what every request to it carries.
#[derive(Clone)]
pub(super) struct Peer {
    pub(super) url: hyper::Uri,
    pub(super) client: HttpClient,
    /// The headers of `HttpOptions::header`.
    pub(super) headers: Arc<hyper::HeaderMap>,
    /// The 2025-11-25 session, once `initialize` opened one.
    pub(super) session: Arc<Mutex<Option<String>>>,
    /// How long a request may go without a word from it (`HttpOptions::timeout`).
    pub(super) patience: Duration,
}

impl Peer {
    /// A request with what every one carries: the fixed headers, `MCP-Protocol-Version`
    /// and the session, if there is one.
    fn start(
        &self,
        req: hyper::http::request::Builder,
        version: &str,
    ) -> hyper::http::request::Builder {
        let mut req = req.header("mcp-protocol-version", version);
        if let Some(h) = req.headers_mut() {
            h.extend(self.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let sid = self
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match sid {
            Some(s) => req.header("mcp-session-id", s),
            None => req,
        }
    }

    /// A POST of `msg`; in 2026-07-28 with `Mcp-Method` (the message's), `Mcp-Name`
    /// (`name`, Base64-encoded where a client must) and `extra` (a call's `Mcp-Param-*`).
    pub(super) fn post(
        &self,
        version: &str,
        msg: &Value,
        name: Option<&str>,
        extra: &[(String, String)],
    ) -> Result<hyper::Request<Full<Bytes>>, UpstreamError> {
        let mut req = self
            .start(hyper::Request::post(self.url.clone()), version)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if version == MODERN {
            if let Some(m) = msg.get("method").and_then(Value::as_str) {
                req = req.header("mcp-method", m);
            }
            if let Some(n) = name {
                req = req.header("mcp-name", encode_header_value(n));
            }
            for (k, v) in extra {
                req = req.header(k.as_str(), v.as_str());
            }
        }
        req.body(Full::new(Bytes::from(msg.to_string())))
            .map_err(gone)
    }

    /// Sends `req`; keeps the session id the response gives.
    pub(super) async fn send(
        &self,
        req: hyper::Request<Full<Bytes>>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, UpstreamError> {
        let resp = self.client.request(req).await.map_err(|e| {
            gone(format!(
                "cannot reach it: {}",
                crate::error::with_sources(&e, true)
            ))
        })?;
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.to_owned());
        }
        Ok(resp)
    }
}

/// Whether a response is an SSE stream.
pub(super) fn is_event_stream(resp: &hyper::Response<hyper::body::Incoming>) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"))
}

/// Where an HTTP upstream tells its list changes: the 2026-07-28 `subscriptions/listen`
/// stream (`open`), or a 2025-11-25 upstream's GET stream, where its requests outside
/// of calls come too (answered: `ping`, or an error). Also what posts our notifications
/// to it.
#[derive(Clone)]
pub(super) struct Listen {
    pub(super) peer: Peer,
    pub(super) version: String,
    pub(super) changes: Arc<Changes>,
    /// The `subscriptions/listen` request (2026-07-28); `None`: the GET stream.
    pub(super) open: Option<Value>,
}

impl Listen {
    /// Keeps the stream open: opened again after it ends, waiting longer each time it
    /// fails at once; given up when the upstream has none (`405`, or an error answer).
    pub(super) async fn run(self) {
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
        let req = match &self.open {
            Some(open) => self.peer.post(&self.version, open, None, &[]),
            None => self
                .peer
                .start(hyper::Request::get(self.peer.url.clone()), &self.version)
                .header("accept", "text/event-stream")
                .body(Full::new(Bytes::new()))
                .map_err(gone),
        };
        let Ok(req) = req else {
            return false;
        };
        let resp = match self.peer.client.request(req).await {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => {
                tracing::debug!(status = %r.status(), "the upstream has no change stream");
                return false;
            }
            Err(e) => {
                tracing::debug!(
                    "the upstream's change stream: {}",
                    crate::error::with_sources(&e, true)
                );
                return true;
            }
        };
        let sse = is_event_stream(&resp);
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
                    self.reply(&reply).await;
                }
            }
        }
        true
    }

    /// POSTs `msg` (a notification or an answer; what comes back is not read).
    pub(super) async fn reply(&self, msg: &Value) {
        if let Ok(req) = self.peer.post(&self.version, msg, None, &[]) {
            let _ = self.peer.client.request(req).await;
        }
    }
}

/// Reads the response to a POSTed request as it comes: JSON, or an SSE stream on which
/// the upstream's requests about it come before its answer.
pub(super) async fn read_events(
    resp: hyper::Response<hyper::body::Incoming>,
    id: u64,
    asks: mpsc::UnboundedSender<Next>,
    answer: oneshot::Sender<Result<Value, UpstreamError>>,
) {
    let status = resp.status();
    let sse = is_event_stream(&resp);
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
pub(super) fn take_event(buf: &mut Vec<u8>) -> Option<String> {
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

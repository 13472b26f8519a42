//! The HTTP side of an upstream: where it is and how a request is POSTed to it (a
//! forgotten session opened again), and its change streams (`subscriptions/listen`, or
//! the legacy GET stream), read as they come. The answer to one POSTed request is read
//! by `posted.rs`.

use super::link::{MAX_MESSAGE, MODERN, Told, UpstreamError, gone, outcome, unsent};
use super::posted::{Events, answer_in};
use super::routing::{Changes, unsolicited};
use crate::protocol::headers::encode_header_value;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(super) type HttpClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// An HTTP upstream: where it is, and what every request to it carries.
#[derive(Clone)]
pub(super) struct Peer {
    pub(super) url: hyper::Uri,
    /// Where what it says wrong is told (its error pages, say), naming it.
    pub(super) told: Arc<Told>,
    pub(super) client: HttpClient,
    /// The headers of `HttpOptions::header`.
    pub(super) headers: Arc<hyper::HeaderMap>,
    /// The 2025-11-25 session, once `initialize` opened one.
    pub(super) session: Arc<Mutex<Option<String>>>,
    /// Held while a new session is opened ([`Peer::reopen`]).
    pub(super) reopening: Arc<tokio::sync::Mutex<()>>,
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

    /// POSTs `msg` (see [`Peer::post`]); the response, its body unread. When the upstream
    /// answers `404` to the session the request carried (it forgot it: it restarted,
    /// say), a new session is opened ([`Peer::reopen`]) and the request sent once more,
    /// in it, as the 2025-11-25 revision asks of a client.
    pub(super) async fn call(
        &self,
        version: &str,
        msg: &Value,
        name: Option<&str>,
        extra: &[(String, String)],
    ) -> Result<hyper::Response<hyper::body::Incoming>, UpstreamError> {
        // While a new session is being opened, there is none to send: wait for it
        // (sent without one, the request would be refused, and not retried).
        if msg["method"] != "initialize" {
            drop(self.reopening.lock().await);
        }
        let req = self.post(version, msg, name, extra)?;
        let carried = req
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let resp = self.send(req).await?;
        let stale = carried.filter(|_| {
            resp.status() == hyper::StatusCode::NOT_FOUND && msg["method"] != "initialize"
        });
        let Some(stale) = stale else {
            return Ok(resp);
        };
        drop(resp);
        self.reopen(version, &stale).await?;
        self.send(self.post(version, msg, name, extra)?).await
    }

    /// Opens a new session in place of `stale`, which the upstream forgot: `initialize`
    /// again (without a session), then `notifications/initialized`. Once for all the
    /// requests that found it forgotten together: one that finds a newer session open
    /// goes on in it. When it fails, `stale` stays (the next request tries again).
    async fn reopen(&self, version: &str, stale: &str) -> Result<(), UpstreamError> {
        let _one = self.reopening.lock().await;
        {
            let mut sid = self.session.lock().unwrap_or_else(|e| e.into_inner());
            if sid.as_deref() != Some(stale) {
                return Ok(());
            }
            *sid = None;
        }
        // Within the time limit: the requests waiting for it (and those to come) wait
        // on `reopening`, which an upstream that never answers would hold for good.
        let opened = tokio::time::timeout(self.patience, self.initialize(version))
            .await
            .unwrap_or(Err(UpstreamError::Timeout));
        if opened.is_err() {
            let mut sid = self.session.lock().unwrap_or_else(|e| e.into_inner());
            sid.get_or_insert_with(|| stale.to_owned());
        } else {
            tracing::info!("the upstream server forgot our session: a new one was opened");
        }
        opened
    }

    /// `initialize` and `notifications/initialized`, outside of any session.
    async fn initialize(&self, version: &str) -> Result<(), UpstreamError> {
        let id = json!("reopen");
        let init = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": super::link::initialize_params()});
        let resp = self.send(self.post(version, &init, None, &[])?).await?;
        let hello = answer_in(self, resp, Some(&id), None, Some(version)).await?;
        let hello = hello.ok_or_else(|| gone("no answer to `initialize`"))?;
        // Its error is not one to the request that found the session forgotten: a fixed
        // reason, and the error to the log.
        outcome(hello, &self.told).map_err(|e| match e {
            UpstreamError::Rpc { .. } => {
                self.told.tell(format_args!(
                    "it forgot our session, and answered the `initialize` opening a new one \
                     with {e}"
                ));
                gone("it forgot our session, and opening a new one failed (it answered an error)")
            }
            e => e,
        })?;
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = self.send(self.post(version, &done, None, &[])?).await?;
        answer_in(self, resp, None, None, None).await.map(drop)
    }

    /// Sends `req`; keeps the session id the response gives.
    pub(super) async fn send(
        &self,
        req: hyper::Request<Full<Bytes>>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, UpstreamError> {
        let resp = self
            .client
            .request(req)
            .await
            .map_err(|e| unsent(&e, &self.told))?;
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

/// Whether a response is an SSE stream (its media type `text/event-stream`, in any case,
/// parameters allowed).
pub(super) fn is_event_stream(resp: &hyper::Response<hyper::body::Incoming>) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .is_some_and(|c| c.trim().eq_ignore_ascii_case("text/event-stream"))
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

/// How one attempt at the change stream went.
enum Opened {
    /// It was read to its end (or could not be reached): open it again.
    Ended,
    /// The upstream answered `404` to the session it carried (this one).
    Forgotten(String),
    /// There is no such stream to open.
    NoStream,
}

impl Listen {
    /// Keeps the stream open: opened again after it ends, waiting longer each time it
    /// fails at once; given up when the upstream has none (`405`, or an error answer).
    pub(super) async fn run(self) {
        let mut backoff = Duration::from_millis(500);
        let mut forgot_before = false;
        loop {
            let started = std::time::Instant::now();
            let forgot = match self.once().await {
                Opened::NoStream => return,
                Opened::Ended => false,
                // A session opened just now, forgotten again: the upstream answers `404`
                // to this stream, not to the session (a server with no GET route).
                Opened::Forgotten(_) if forgot_before => {
                    tracing::debug!("the upstream has no change stream (404 in a new session)");
                    return;
                }
                // The upstream forgot our session: opened again in a new one.
                Opened::Forgotten(stale) => {
                    if let Err(e) = self.peer.reopen(&self.version, &stale).await {
                        tracing::debug!("the upstream's change stream: {e}");
                    }
                    true
                }
            };
            forgot_before = forgot;
            if started.elapsed() > Duration::from_secs(30) {
                backoff = Duration::from_millis(500);
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(30));
        }
    }

    /// One stream, read to its end.
    async fn once(&self) -> Opened {
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
            return Opened::NoStream;
        };
        let carried = req
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Its head within the time limit: a stream never answered is opened again.
        let head = tokio::time::timeout(self.peer.patience, self.peer.client.request(req));
        let Ok(head) = head.await else {
            tracing::debug!("the upstream's change stream: no answer within its time limit");
            return Opened::Ended;
        };
        let resp = match head {
            Ok(r) if r.status().is_success() => r,
            Ok(r) if r.status() == hyper::StatusCode::NOT_FOUND && carried.is_some() => {
                return Opened::Forgotten(carried.unwrap_or_default());
            }
            Ok(r) => {
                tracing::debug!(status = %r.status(), "the upstream has no change stream");
                return Opened::NoStream;
            }
            Err(e) => {
                tracing::debug!(
                    "the upstream's change stream: {}",
                    crate::error::with_sources(&e)
                );
                return Opened::Ended;
            }
        };
        let sse = is_event_stream(&resp);
        if !sse {
            // An answer at once (an error): it does not listen.
            return Opened::NoStream;
        }
        let mut body = resp.into_body();
        let mut events = Events::default();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            events.push(&data);
            if events.held() > MAX_MESSAGE {
                return Opened::Ended;
            }
            while let Some(event) = events.next_data() {
                let Ok(msg) = serde_json::from_str::<Value>(&event) else {
                    continue;
                };
                if let Some(reply) = unsolicited(&msg, &self.changes) {
                    self.reply(&reply).await;
                }
            }
        }
        Opened::Ended
    }

    /// POSTs `msg` (a notification or an answer; what comes back is not read).
    pub(super) async fn reply(&self, msg: &Value) {
        self.peer.reply(&self.version, msg).await;
    }

    /// Tells the upstream, from a task of its own, that our request `id` was given up
    /// (`notifications/cancelled`): a closed connection is no cancellation to a
    /// Streamable HTTP server, which would work on.
    pub(super) fn cancel_later(self, id: u64, reason: &'static str) {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": reason}});
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { self.reply(&note).await });
        }
    }
}

impl Peer {
    /// POSTs `msg` in `version` (a notification or an answer; what comes back is not
    /// read), waiting at most the upstream's time limit for the response: a cancellation
    /// sent by a task of its own would otherwise hold that task and its connection for
    /// ever.
    pub(super) async fn reply(&self, version: &str, msg: &Value) {
        if let Ok(req) = self.post(version, msg, None, &[]) {
            let _ = tokio::time::timeout(self.patience, self.client.request(req)).await;
        }
    }
}

//! A legacy-era session (2025-11-25 and earlier): what `initialize` negotiated, the
//! per-session state the older revisions keep (log level, resource subscriptions), the
//! server→client requests waiting for the client's answer, and the stream for messages
//! not tied to a request. A stdio process has one; an HTTP server one per
//! `Mcp-Session-Id`. Transport agnostic: a transport gives it its outbound channel and
//! hands it the client's responses.

use super::ServerInner;
use super::context::NotificationSink;
use super::methods::listen::{MAX_RESOURCE_SUBSCRIPTIONS, covers};
use crate::protocol::envelope;
use crate::protocol::legacy::LegacyVersion;
use crate::protocol::{ClientCapabilities, LogLevel, RequestId, RpcError};
use crate::store::Change;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// What the client answered to a server→client request.
pub(crate) type Answer = Result<Value, RpcError>;

/// One legacy session.
pub(crate) struct Session {
    /// The `Mcp-Session-Id` (HTTP), or `stdio`.
    pub(crate) id: String,
    pub(crate) version: LegacyVersion,
    /// What `initialize` declared (elicitation taken out before 2025-06-18, which does not
    /// define it).
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Value>,
    log_level: Mutex<Option<LogLevel>>,
    subscriptions: Mutex<BTreeSet<String>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Answer>>>,
    /// The input key each pending request asks for (the in-process test client answers by
    /// key, as in the modern era).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    keys: Mutex<HashMap<u64, String>>,
    next_id: AtomicU64,
    /// Messages not tied to a request: stdout, or the HTTP GET stream while one is open.
    outbound: Mutex<Option<mpsc::Sender<String>>>,
    /// Client requests in flight, for `notifications/cancelled`: each id's token, and the
    /// serial of the [`Tracked`] that holds it (so that only it takes the entry out).
    in_flight: Mutex<HashMap<RequestId, (u64, CancellationToken)>>,
    next_tracked: AtomicU64,
    last_seen: Mutex<Instant>,
    /// Cancelled when the session ends: its forwarder and waiting requests stop.
    pub(crate) closed: CancellationToken,
    /// The caller that opened it (HTTP with authorization): only it may use the session.
    owner: std::sync::OnceLock<Arc<crate::auth::Principal>>,
}

impl Session {
    /// Binds the session to the caller that opened it (once).
    pub(crate) fn bind_owner(&self, principal: Arc<crate::auth::Principal>) {
        let _ = self.owner.set(principal);
    }
    /// The caller that opened it, if bound.
    pub(crate) fn owner(&self) -> Option<Arc<crate::auth::Principal>> {
        self.owner.get().cloned()
    }
    /// Whether `principal` may use the session: the one that opened it (or anyone, for a
    /// session opened without authorization).
    pub(crate) fn admits(&self, principal: Option<&crate::auth::Principal>) -> bool {
        match (self.owner.get(), principal) {
            (None, _) => true,
            (Some(o), Some(p)) => o.key() == p.key(),
            (Some(_), None) => false,
        }
    }

    /// Logs that the session opened: by the transport, once it holds the session (not
    /// when `initialize` made it: past the cap on sessions it is refused after that).
    pub(crate) fn log_opened(&self) {
        let client = self
            .client_info
            .as_ref()
            .and_then(|c| c.get("name"))
            .and_then(|n| n.as_str())
            .map(crate::protocol::reflect)
            .unwrap_or_default();
        // The client's name as a quoted string field: its spaces and `=` cannot forge
        // fields of the line.
        tracing::info!(session = %self.id, version = %self.version, client = &*client, "legacy session opened");
    }

    /// A session for a client that sent `initialize` with these params, at `version`.
    pub(crate) fn new(id: String, version: LegacyVersion, params: &Map<String, Value>) -> Self {
        let mut caps = match params.get("capabilities") {
            Some(Value::Object(c)) => c.clone(),
            _ => Map::new(),
        };
        if !version.has_elicitation() {
            caps.remove("elicitation");
        } else if !version.has_elicitation_modes() && caps.contains_key("elicitation") {
            // Before 2025-11-25 an elicitation is a form: `elicitation.url` declared at
            // 2025-06-18 means nothing, and a URL request would reach the client as a
            // form without its schema.
            caps.insert("elicitation".into(), Value::Object(Map::new()));
        }
        Session {
            id,
            version,
            capabilities: ClientCapabilities::from_map(caps),
            client_info: params.get("clientInfo").cloned(),
            log_level: Mutex::new(None),
            subscriptions: Mutex::new(BTreeSet::new()),
            pending: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            outbound: Mutex::new(None),
            in_flight: Mutex::new(HashMap::new()),
            next_tracked: AtomicU64::new(0),
            last_seen: Mutex::new(Instant::now()),
            closed: CancellationToken::new(),
            owner: std::sync::OnceLock::new(),
        }
    }

    /// The lowest level sent as `notifications/message`: what `logging/setLevel` set, else
    /// everything (as the legacy revisions' servers do before any `setLevel`).
    pub(crate) fn log_level(&self) -> LogLevel {
        lock(&self.log_level).unwrap_or(LogLevel::Debug)
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        *lock(&self.log_level) = Some(level);
    }

    /// Subscribes to `uri`: `false` when the session holds
    /// [`MAX_RESOURCE_SUBSCRIPTIONS`] others already.
    pub(crate) fn subscribe(&self, uri: String) -> bool {
        let mut subscriptions = lock(&self.subscriptions);
        if subscriptions.len() >= MAX_RESOURCE_SUBSCRIPTIONS && !subscriptions.contains(&uri) {
            return false;
        }
        subscriptions.insert(uri);
        true
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    /// Whether a change of `uri` concerns a subscription (the URI, or one below it).
    fn subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).iter().any(|s| covers(s, uri))
    }

    /// Where messages not tied to a request go from now on (`None`: nowhere).
    pub(crate) fn set_outbound(&self, tx: Option<mpsc::Sender<String>>) {
        *lock(&self.outbound) = tx;
    }

    /// Whether a stream for messages not tied to a request is open.
    pub(crate) fn has_outbound(&self) -> bool {
        lock(&self.outbound)
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    /// Sends a message not tied to a request; dropped when no stream is open or it is
    /// full (delivery is best effort, as for notifications).
    pub(crate) fn send(&self, msg: String) -> bool {
        match &*lock(&self.outbound) {
            Some(tx) => tx.try_send(msg).is_ok(),
            None => false,
        }
    }

    /// Sends a server→client request (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`) on the stream of the request that needs it (else the session's
    /// stream); the receiver gets the client's answer.
    pub(crate) fn request(
        self: &Arc<Self>,
        sink: &NotificationSink,
        key: &str,
        method: &str,
        params: Value,
    ) -> Result<Asking, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        lock(&self.keys).insert(id, key.to_owned());
        let asking = Asking {
            session: Arc::downgrade(self),
            id,
            rx,
            sink: sink.clone(),
        };
        let msg = envelope::request(id, method, params);
        if !sink.send_raw(msg.clone()) && !self.send(msg) {
            // `asking`, dropped, forgets the request.
            return Err(RpcError::internal(format!(
                "Internal error: no stream to send `{method}` to the client on"
            )));
        }
        Ok(asking)
    }

    /// Forgets the server→client request `id` (answered, or no longer waited for); one
    /// still unanswered is cancelled at the client (`notifications/cancelled`, on the
    /// stream it was asked on, `sink`, else the session's stream), so it can close what
    /// it shows for it (a form, a sampling approval) now that its answer would go nowhere.
    fn forget(&self, id: u64, sink: &NotificationSink) {
        let unanswered = lock(&self.pending).remove(&id).is_some();
        lock(&self.keys).remove(&id);
        if unanswered && !self.closed.is_cancelled() {
            let msg = envelope::notification(
                crate::protocol::methods::NOTIFICATION_CANCELLED,
                json!({"requestId": id, "reason": "the request that asked is over"}),
            );
            if !sink.send_last(msg.clone()) {
                self.send(msg);
            }
        }
    }

    /// Hands the client's response (`{"id", "result"|"error"}`) to the request waiting for
    /// it; a response to nothing the server asked is ignored.
    pub(crate) fn resolve(&self, response: &Map<String, Value>) {
        let Some(id) = response.get("id").and_then(Value::as_u64) else {
            tracing::debug!("a response to no request of this server: ignored");
            return;
        };
        lock(&self.keys).remove(&id);
        let Some(tx) = lock(&self.pending).remove(&id) else {
            tracing::debug!(id, "a response to no pending request: ignored");
            return;
        };
        let answer = match (response.get("result"), response.get("error")) {
            (Some(r), None) => Ok(r.clone()),
            (_, Some(e)) => Err(RpcError::internal(format!(
                "the client answered with an error: {}",
                e.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message")
            ))),
            (None, None) => Err(RpcError::internal(
                "the client's answer has neither `result` nor `error`",
            )),
        };
        let _ = tx.send(answer);
    }

    /// The input key a pending server→client request asks for.
    #[cfg(feature = "testing")]
    pub(crate) fn key_of(&self, id: u64) -> Option<String> {
        lock(&self.keys).get(&id).cloned()
    }

    /// Records a client request in flight (its cancellation, for
    /// `notifications/cancelled`) until the [`Tracked`] is finished or dropped. `None`
    /// when `id` already names a request in flight: a cancel naming it would be ambiguous.
    pub(crate) fn track(
        self: &Arc<Self>,
        id: RequestId,
        cancel: CancellationToken,
    ) -> Option<Tracked> {
        let serial = self.next_tracked.fetch_add(1, Ordering::Relaxed);
        let mut in_flight = lock(&self.in_flight);
        if in_flight.contains_key(&id) {
            return None;
        }
        in_flight.insert(id.clone(), (serial, cancel.clone()));
        Some(Tracked {
            session: Arc::clone(self),
            id,
            serial,
            cancel,
        })
    }

    /// `notifications/cancelled {requestId}`: cancels that request.
    pub(crate) fn cancel(&self, params: Option<&Value>) {
        let Some(id) = params
            .and_then(|p| p.get("requestId"))
            .and_then(RequestId::from_value)
        else {
            return;
        };
        if let Some((_, token)) = lock(&self.in_flight).remove(&id) {
            tracing::debug!(%id, "request cancelled by the client");
            token.cancel();
        }
    }

    /// Notes activity (for idle expiry).
    pub(crate) fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    /// Whether a request of the session is being served.
    pub(crate) fn is_serving(&self) -> bool {
        !lock(&self.in_flight).is_empty()
    }

    /// How long since the last request.
    pub(crate) fn idle(&self) -> std::time::Duration {
        lock(&self.last_seen).elapsed()
    }

    /// Ends the session: waiting server→client requests fail, the forwarder stops.
    pub(crate) fn close(&self) {
        self.closed.cancel();
        lock(&self.pending).clear();
        for (_, (_, t)) in lock(&self.in_flight).drain() {
            t.cancel();
        }
        self.set_outbound(None);
    }

    /// Forwards the server's changes to this session until it closes: list changes of the
    /// kinds the server has, and updates of subscribed resources.
    pub(crate) fn forward_changes(self: &Arc<Self>, server: &Arc<ServerInner>) {
        let this = Arc::clone(self);
        let mut changes = server.changes();
        let server = Arc::downgrade(server);
        tokio::spawn(async move {
            loop {
                let change = tokio::select! {
                    () = this.closed.cancelled() => return,
                    c = changes.next() => match c {
                        Some(c) => c,
                        None => return,
                    },
                };
                let Some(server) = server.upgrade() else {
                    return;
                };
                let catalog = server.catalog();
                let (method, params) = match change {
                    Change::ToolsListChanged if catalog.has_tools() => {
                        ("notifications/tools/list_changed", json!({}))
                    }
                    Change::PromptsListChanged if catalog.has_prompts() => {
                        ("notifications/prompts/list_changed", json!({}))
                    }
                    Change::ResourcesListChanged if catalog.has_resources() => {
                        ("notifications/resources/list_changed", json!({}))
                    }
                    Change::ResourceUpdated(uri) if this.subscribed(&uri) => {
                        ("notifications/resources/updated", json!({ "uri": uri }))
                    }
                    _ => continue,
                };
                this.send(envelope::notification(method, params));
            }
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The answer to a request of a session whose id names one still in flight: its cancel
/// would be ambiguous.
pub(crate) fn in_flight_already(id: &RequestId) -> String {
    let r = super::reply::Rejection::malformed("this request id is already in flight");
    super::reply::Reply::rejection(Some(id), r)
        .into_legacy()
        .body
}

/// A client request of a session in flight ([`Session::track`]); untracked when dropped.
pub(crate) struct Tracked {
    session: Arc<Session>,
    id: RequestId,
    serial: u64,
    cancel: CancellationToken,
}

impl Tracked {
    /// Runs the request's work (`run`): `None` when the client cancelled it
    /// (`notifications/cancelled`) or the session ended first. The work is then dropped,
    /// whether or not it looks at its cancellation, and the request is not answered,
    /// even when its handler answered the cancellation.
    pub(crate) async fn run(self, run: super::pipeline::Run) -> Option<super::reply::Reply> {
        let mut run = run;
        let reply = tokio::select! {
            biased;
            r = &mut run => Some(r),
            () = self.cancel.cancelled() => None,
        };
        drop(run);
        reply.filter(|_| self.untrack())
    }

    /// Takes the entry out if it is still this request's; `false` when a cancel (or the
    /// session's end) took it first.
    fn untrack(&self) -> bool {
        let mut in_flight = lock(&self.session.in_flight);
        match in_flight.get(&self.id) {
            Some((serial, _)) if *serial == self.serial => {
                in_flight.remove(&self.id);
                drop(in_flight);
                // The session was in use until now: it goes idle from here.
                self.session.touch();
                true
            }
            _ => false,
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.untrack();
    }
}

/// A server→client request waiting for the client's answer: its future is that answer;
/// dropped before it (the handler gave up: cancelled, timed out), the session forgets
/// the request, so a client that never answers does not grow the session.
pub(crate) struct Asking {
    session: std::sync::Weak<Session>,
    id: u64,
    rx: oneshot::Receiver<Answer>,
    /// The stream of the request that asked, where a cancellation of the question goes.
    sink: NotificationSink,
}

impl Future for Asking {
    type Output = Result<Answer, oneshot::error::RecvError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.rx).poll(cx)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        if let Some(session) = self.session.upgrade() {
            session.forget(self.id, &self.sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_are_answered_by_id_and_strays_are_ignored() {
        let params = json!({"capabilities": {"elicitation": {}, "sampling": {}}});
        let s = Arc::new(Session::new(
            "s".into(),
            LegacyVersion::V2025_11_25,
            params.as_object().unwrap(),
        ));
        assert!(s.capabilities.has("elicitation"));
        let (tx, mut rx) = mpsc::channel(4);
        let sink = NotificationSink::new(tx, tokio_util::sync::CancellationToken::new());
        let answer = s
            .request(&sink, "k", "sampling/createMessage", json!({}))
            .unwrap();
        let sent: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(sent["method"], "sampling/createMessage");
        assert_eq!(sent["id"], 0);
        s.resolve(json!({"id": 99, "result": {}}).as_object().unwrap());
        s.resolve(
            json!({"id": 0, "result": {"model": "m"}})
                .as_object()
                .unwrap(),
        );
        assert_eq!(answer.await.unwrap().unwrap()["model"], "m");
        // A request no longer waited for (its handler gave up) is forgotten.
        let given_up = s.request(&sink, "k2", "roots/list", json!({})).unwrap();
        assert_eq!(lock(&s.pending).len(), 1);
        drop(given_up);
        assert!(lock(&s.pending).is_empty() && lock(&s.keys).is_empty());

        let old = Session::new(
            "o".into(),
            LegacyVersion::V2025_03_26,
            params.as_object().unwrap(),
        );
        assert!(
            !old.capabilities.has("elicitation"),
            "2025-03-26 has no elicitation"
        );
        assert_eq!(old.log_level(), LogLevel::Debug);
        old.subscribe("test://a".into());
        assert!(
            old.subscribed("test://a")
                && old.subscribed("test://a/b")
                && !old.subscribed("test://ab")
        );
    }
}

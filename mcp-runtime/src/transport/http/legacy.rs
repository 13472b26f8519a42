//! The legacy era on Streamable HTTP (2025-11-25, 2025-06-18, 2025-03-26): `initialize`
//! opens a session named by `Mcp-Session-Id`; later POSTs carry it (an unknown one is
//! 404); GET opens the session's stream for messages not tied to a request; DELETE ends
//! the session. A request's notifications and the server's requests to the client go on
//! the POST's own SSE stream, and the client's answers come back as POSTs (202). Closing
//! a stream does not cancel its request in these revisions; `notifications/cancelled`
//! does.

use super::headers::{SESSION_HEADER, Single};
use super::{HttpServer, json_reply, sse};
use crate::protocol::legacy::LegacyVersion;
use crate::protocol::{RpcError, keys};
use crate::server::parts::Streams;
use crate::server::reply::{ErrorClass, Rejection, Reply};
use crate::server::route::Prepared;
use crate::server::session::Session;
use crate::server::slot::Slot;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The live sessions of one HTTP server, capped, forgotten after an idle timeout.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    max: usize,
    idle: Duration,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Sessions {
            map: Mutex::new(HashMap::new()),
            max,
            idle,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a session has gone idle: one with a GET stream open or a request being
    /// served never does, and its idle time counts from when the last of those ended.
    fn expired(&self, s: &Session) -> bool {
        !s.has_outbound() && !s.is_serving() && s.idle() > self.idle
    }

    /// The live session `id`; an expired one is closed and forgotten.
    fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut map = self.lock();
        let s = map.get(id)?;
        if self.expired(s) {
            if let Some(s) = map.remove(id) {
                s.close();
            }
            return None;
        }
        Some(Arc::clone(s))
    }

    /// Adds a session. At the cap, idle ones are forgotten first, then the one unused
    /// the longest that has no stream open and no request being served (its client gets
    /// 404 and initializes again, as after expiry): anonymous `initialize`s cannot fill
    /// the table and lock clients out until sessions expire. `false` when every session
    /// is in use.
    fn insert(&self, s: Arc<Session>) -> bool {
        let mut map = self.lock();
        if map.len() >= self.max {
            map.retain(|_, s| {
                let keep = !self.expired(s);
                if !keep {
                    s.close();
                }
                keep
            });
        }
        if map.len() >= self.max {
            let unused = map
                .iter()
                .filter(|(_, s)| !s.has_outbound() && !s.is_serving())
                .max_by_key(|(_, s)| s.idle())
                .map(|(id, _)| id.clone());
            let Some(id) = unused else {
                return false;
            };
            if let Some(old) = map.remove(&id) {
                tracing::debug!(
                    "legacy sessions at their cap: the one unused longest is forgotten"
                );
                old.close();
            }
        }
        map.insert(s.id.clone(), s);
        true
    }

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().remove(id)
    }

    /// Ends every session (shutdown: their GET streams end).
    pub(crate) fn close_all(&self) {
        for (_, s) in self.lock().drain() {
            s.close();
        }
    }
}

/// Notes the session's activity when dropped: a GET stream keeps its session in use, so
/// it goes idle from when the stream ends.
pub(super) struct Touch(Arc<Session>);

impl Drop for Touch {
    fn drop(&mut self) {
        self.0.touch();
    }
}

/// A session id: 128 random bits, hex (visible ASCII, as the spec requires).
fn new_session_id() -> Option<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).ok()?;
    Some(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// The single value of a header, if it is there once and readable.
fn one<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    Single::read(headers, name).lenient()
}

/// Whether a message carries per-request `_meta` (the modern era).
fn has_modern_meta(msg: &Value) -> bool {
    msg.get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(keys::PROTOCOL_VERSION))
        .is_some()
}

/// A JSON-RPC error answer made by this front, with its HTTP status.
fn error(status: StatusCode, msg: &Value, e: RpcError) -> Response {
    super::handle::json_body(status, error_reply(msg, e).body)
}

/// The reply [`error`] and [`refused`] send: `e`, with the id of `msg` when it has one.
fn error_reply(msg: &Value, e: RpcError) -> Reply {
    let id = msg
        .get("id")
        .and_then(crate::protocol::RequestId::from_value);
    Reply::rejection(id.as_ref(), Rejection::new(ErrorClass::Malformed, e))
}

/// [`error`] for a POSTed message refused before it is routed (its version or session
/// header): counted in the request metrics as a refusal of the core is, under its method
/// when that is one of MCP (`unknown` otherwise).
fn refused(status: StatusCode, msg: &Value, e: RpcError) -> Response {
    let reply = error_reply(msg, e);
    #[cfg(feature = "metrics")]
    crate::server::metrics::rejected(crate::server::metrics::label_of(msg), &reply);
    super::handle::json_body(status, reply.body)
}

/// 404 to a GET or DELETE for a session that does not exist (any more) or is another
/// caller's, so the client initializes again (a POST's is [`refused`], its id echoed).
fn unknown_session() -> Response {
    error(StatusCode::NOT_FOUND, &Value::Null, unknown_session_error())
}

/// See [`unknown_session`].
fn unknown_session_error() -> RpcError {
    RpcError::invalid_request("unknown or expired session; initialize again")
}

fn with_session_header(mut resp: Response, id: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert(SESSION_HEADER.clone(), v);
    }
    resp
}

/// Where [`HttpServer::legacy_post`] sends a POST.
pub(super) enum LegacyPost<'h> {
    /// The modern path's, handed back.
    Modern(Value),
    /// Answered without running anything (a session opened, or an error).
    Answer(Response),
    /// A message of the legacy session `id` names: [`HttpServer::serve_in_session`].
    InSession {
        msg: Value,
        session: Arc<Session>,
        id: &'h str,
    },
}

impl HttpServer {
    /// Where a POST goes: back to the modern path (a message with per-request `_meta` or
    /// a modern version header is modern, and so is anything that neither names a session
    /// nor opens one), answered at once, or into its legacy session. Nothing here waits:
    /// the modern path's future does not hold the legacy one's state.
    /// `version` is the request's `MCP-Protocol-Version`, read by the caller (the modern
    /// path reads it too).
    pub(super) fn legacy_post<'h>(
        &self,
        msg: Value,
        headers: &'h HeaderMap,
        version: Single<'h>,
        caller: Option<&Arc<crate::auth::Principal>>,
    ) -> LegacyPost<'h> {
        if !self.server.inner.legacy.enabled {
            return LegacyPost::Modern(msg);
        }
        let version = version.lenient();
        let modern_header = version.is_some_and(|v| crate::protocol::MODERN_VERSIONS.contains(&v));
        if modern_header || has_modern_meta(&msg) {
            return LegacyPost::Modern(msg);
        }
        if let Some(v) = version
            && LegacyVersion::parse(v).is_none()
        {
            let e = RpcError::invalid_request(format!(
                "unsupported MCP-Protocol-Version {}; this server supports {}",
                crate::protocol::reflect(v),
                self.server.inner.versions().join(", ")
            ));
            return LegacyPost::Answer(refused(StatusCode::BAD_REQUEST, &msg, e));
        }
        match one(headers, &SESSION_HEADER) {
            Some(id) => match self.session_for(id, caller.map(|p| &**p)) {
                Some(session) => LegacyPost::InSession { msg, session, id },
                None => LegacyPost::Answer(refused(
                    StatusCode::NOT_FOUND,
                    &msg,
                    unknown_session_error(),
                )),
            },
            None if self.server.opens_session(&msg) => {
                LegacyPost::Answer(self.open_session(msg, caller))
            }
            // A legacy version header, no session, not `initialize`.
            None if version.is_some() => LegacyPost::Answer(refused(
                StatusCode::BAD_REQUEST,
                &msg,
                RpcError::invalid_request("Mcp-Session-Id header is required"),
            )),
            None => LegacyPost::Modern(msg),
        }
    }

    /// A message of a legacy session, answered with the session's id. `slot` is the
    /// request's unit of the in-flight cap: held by the answer, or by the handler while
    /// it outlives its connection.
    pub(super) async fn serve_in_session(
        &self,
        msg: Value,
        session: &Arc<Session>,
        id: &str,
        (accepts_json, accepts_sse): (bool, bool),
        caller: Option<&Arc<crate::auth::Principal>>,
        slot: Slot,
    ) -> Response {
        let answer = self.in_session(msg, session, (accepts_json, accepts_sse), caller, slot);
        with_session_header(answer.await, id)
    }

    /// `initialize`: a new session, named in the `Mcp-Session-Id` of the answer.
    fn open_session(&self, msg: Value, caller: Option<&Arc<crate::auth::Principal>>) -> Response {
        let Some(id) = new_session_id() else {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &msg,
                RpcError::internal("Internal error: no randomness for a session id"),
            );
        };
        #[cfg(feature = "metrics")]
        let observed = crate::server::metrics::begin_initialize(&self.server.inner);
        let (session, reply) = self.server.initialize(msg.clone(), id.clone());
        // Counted as answered, or (the session not kept) as refused when busy.
        let counted = |_reply: &crate::server::reply::Reply| {
            #[cfg(feature = "metrics")]
            if let Some(obs) = observed {
                crate::server::metrics::end(obs, _reply);
            }
        };
        let Some(session) = session else {
            counted(&reply);
            return json_reply(reply);
        };
        if let Some(p) = caller {
            session.bind_owner(Arc::clone(p));
        }
        if !self.sessions.insert(Arc::clone(&session)) {
            crate::telemetry::cap_reached("too many legacy sessions");
            #[cfg(feature = "metrics")]
            crate::server::metrics::refused_busy();
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                &msg,
                RpcError::internal("Too many open sessions; try again later"),
            );
        }
        session.log_opened();
        session.forward_changes(&self.server.inner);
        counted(&reply);
        with_session_header(json_reply(reply), &id)
    }

    /// A message of a live session: a request (answered with JSON, or SSE once the
    /// handler streams), a notification or a response of the client (202), or a
    /// 2025-03-26 batch.
    async fn in_session(
        &self,
        msg: Value,
        session: &Arc<Session>,
        (accepts_json, accepts_sse): (bool, bool),
        caller: Option<&Arc<crate::auth::Principal>>,
        slot: Slot,
    ) -> Response {
        let streams = if accepts_sse {
            Streams::OnDemand
        } else {
            Streams::None
        };
        if let Value::Array(batch) = msg {
            // Each call of the batch takes a unit of its own; the batch's bytes stay held
            // while it runs (its JSON is in memory until then).
            let bytes = slot.bytes_only();
            let requests = batch.iter().any(crate::protocol::envelope::is_request);
            let answer = self
                .server
                .run_batch(batch, session, Streams::None, caller)
                .await;
            drop(bytes);
            return match answer {
                Ok(Some(body)) => super::handle::json_body(StatusCode::OK, body),
                // Its requests were all cancelled: answered as a single one is then, with
                // a stream that ends unanswered (a POST carrying a request never gets a
                // bare 202 when the client takes a stream).
                Ok(None) if requests => {
                    super::handle::answer(Reply::withheld(), (accepts_json, accepts_sse))
                }
                Ok(None) => StatusCode::ACCEPTED.into_response(),
                Err(refused) => json_reply(refused),
            };
        }
        let mut job = match self.server.prepare_legacy(msg, session, streams, caller) {
            Prepared::Reply(r) => return json_reply(r),
            Prepared::Answer | Prepared::Listen(_) => return StatusCode::ACCEPTED.into_response(),
            Prepared::Notification { method, params } => {
                if method == crate::protocol::methods::NOTIFICATION_CANCELLED {
                    session.cancel(params.as_ref());
                }
                return StatusCode::ACCEPTED.into_response();
            }
            Prepared::Call(job) => job,
        };
        let id = job.id().clone();
        let Some(tracked) = session.track(id.clone(), job.cancellation()) else {
            let body = crate::server::session::in_flight_already(&id);
            return super::handle::json_body(StatusCode::OK, body);
        };
        let rx = job.take_notifications();
        let mut run = job.run();
        // Most calls finish in their first poll: answered here, with no task of their own.
        if let std::task::Poll::Ready(r) = futures_util::poll!(&mut run) {
            drop(tracked);
            let resp = super::respond(std::future::ready(r), rx, (accepts_json, accepts_sse)).await;
            return resp.map(|b| super::conn::holding(b, slot));
        }
        // The rest runs on its own task: a closed connection does not cancel it here
        // (`notifications/cancelled` does: the handler is dropped, and the request is not
        // answered, even when the handler answered its cancellation). The task holds the
        // request's unit of the in-flight cap, so handlers that outlive their connections
        // stay counted.
        let (done, reply) = oneshot::channel();
        tokio::spawn(async move {
            let r = tracked.run(run).await.unwrap_or_else(Reply::withheld);
            drop(slot);
            let _ = done.send(r);
        });
        let fut = async move {
            reply.await.unwrap_or_else(|_| {
                Reply::rejection(
                    None,
                    Rejection::failed(RpcError::internal(
                        "Internal error: the request was dropped",
                    )),
                )
            })
        };
        super::respond(fut, rx, (accepts_json, accepts_sse)).await
    }

    /// The session `id`, if it exists and `caller` may use it (another caller's session
    /// is as unknown as a missing one).
    fn session_for(
        &self,
        id: &str,
        caller: Option<&crate::auth::Principal>,
    ) -> Option<std::sync::Arc<Session>> {
        self.sessions.get(id).filter(|s| s.admits(caller))
    }

    /// GET: the session's stream for messages not tied to a request (list changes,
    /// resource updates). One per session at a time: a new one replaces the one open.
    pub(super) fn legacy_get(
        &self,
        headers: &HeaderMap,
        caller: Option<&crate::auth::Principal>,
    ) -> Option<Response> {
        if !self.server.inner.legacy.enabled {
            return None;
        }
        let id = one(headers, &SESSION_HEADER)?;
        let Some(session) = self.session_for(id, caller) else {
            return Some(unknown_session());
        };
        if !super::headers::accepted(headers).1 {
            return Some(super::handle::refuse(
                StatusCode::NOT_ACCEPTABLE,
                RpcError::invalid_request("Accept must allow text/event-stream"),
            ));
        }
        // A GET while one is open takes its place (the old one ends): the client may have
        // lost the first without the server knowing (a half-open connection), and a GET
        // MUST get a stream or 405.
        if session.has_outbound() {
            tracing::debug!(session = %id, "a new GET stream replaces the open one");
        }
        session.touch();
        let (tx, rx) = mpsc::channel(256);
        session.set_outbound(Some(tx));
        Some(with_session_header(
            sse::session_stream(
                rx,
                self.config.keep_alive,
                caller.and_then(crate::auth::Principal::stream_deadline),
                Touch(session),
                self.server.inner.shutdown.child_token(),
            ),
            id,
        ))
    }

    /// DELETE: ends the session.
    pub(super) fn legacy_delete(
        &self,
        headers: &HeaderMap,
        caller: Option<&crate::auth::Principal>,
    ) -> Option<Response> {
        if !self.server.inner.legacy.enabled {
            return None;
        }
        let id = one(headers, &SESSION_HEADER)?;
        if self.session_for(id, caller).is_none() {
            return Some(unknown_session());
        }
        Some(match self.sessions.remove(id) {
            Some(s) => {
                s.close();
                tracing::info!(session = %id, "legacy session ended by the client");
                StatusCode::OK.into_response()
            }
            None => unknown_session(),
        })
    }
}

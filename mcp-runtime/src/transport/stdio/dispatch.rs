//! One stdio connection's messages: what each line does, whoever reads it.

use super::lines::Line;
use super::sections::Sections;
use super::{MAX_LINE, Put, StdOut, try_put};
use crate::protocol::{RequestId, RpcError, json::parse_strict, methods};
use crate::server::parts::{NoGuard, Streams};
use crate::server::reply::{ErrorClass, Rejection, Reply};
use crate::server::route::Prepared;
use crate::server::session::Session;
use crate::server::{Listen, Server};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio_util::sync::CancellationToken;

type InFlight = Arc<Mutex<HashMap<RequestId, AbortHandle>>>;

/// What a connection keeps between messages. Shared by reference between the reader of
/// the lines and the end of the connection, hence the locks (never held across an await
/// or a handler's poll).
pub(super) struct Dispatch {
    server: Server,
    /// Where spawned requests and subscriptions queue what they write.
    tx: mpsc::Sender<String>,
    /// stdout, when the connection is the process's stdio: a spawned request's task
    /// writes its answer there itself when no one else is writing (see [`Answers`]).
    direct: Option<Arc<Mutex<StdOut>>>,
    in_flight: InFlight,
    tasks: Mutex<Tasks>,
    end_of_input: CancellationToken,
    /// The legacy era's one session, opened by `initialize`.
    session: OnceLock<Arc<Session>>,
    /// Blocking sections its requests started that still run.
    sections: Sections,
}

impl Dispatch {
    /// `direct`: stdout, shared with the reading thread and the forwarder (`None` for an
    /// async writer, which only the serving loop writes).
    pub(super) fn new(
        server: Server,
        tx: mpsc::Sender<String>,
        direct: Option<Arc<Mutex<StdOut>>>,
    ) -> Self {
        Dispatch {
            server,
            tx,
            direct,
            in_flight: Arc::default(),
            tasks: Mutex::new(Tasks {
                set: JoinSet::new(),
                closed: false,
            }),
            end_of_input: CancellationToken::new(),
            session: OnceLock::new(),
            sections: Sections::default(),
        }
    }

    /// Where a task sends the line it ends with.
    fn answers(&self) -> Answers {
        Answers {
            tx: self.tx.clone(),
            direct: self.direct.clone(),
        }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, Tasks> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Spawns `task` on the runtime, unless the connection is winding down (a line read
    /// as it began): `None` then, and the task is dropped.
    fn spawn(
        &self,
        task: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Option<AbortHandle> {
        let mut tasks = self.tasks();
        if tasks.closed {
            return None;
        }
        // Boxed: one task type (one copy of the runtime's task code) for every kind.
        let task: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> = Box::pin(task);
        Some(tasks.set.spawn(self.sections.scope(task)))
    }

    /// How many blocking sections its requests started are still running.
    pub(super) fn sections_running(&self) -> usize {
        self.sections.running()
    }

    /// Spawns `work` as the task of request `id`, which `notifications/cancelled` naming
    /// `id` aborts; the line `work` ends with is sent once `id` has left the in-flight map
    /// (so the client may reuse the id as soon as it reads it), and `hold` (an admission
    /// slot) is dropped after that send. `false`, with nothing spawned, once the
    /// connection winds down.
    fn spawn_request(
        &self,
        id: RequestId,
        hold: impl Send + 'static,
        work: impl std::future::Future<Output = Option<String>> + Send + 'static,
    ) -> bool {
        let answers = self.answers();
        let map = Arc::clone(&self.in_flight);
        // Held until the handle is in, so the task cannot remove its entry first.
        let mut guard = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let task_id = id.clone();
        let handle = self.spawn(async move {
            let _hold = hold;
            // The id leaves the map however the task ends: its line about to be sent (once
            // out, a late cancel is ignored and the line committed), a panic past the
            // handler's guard, or an abort.
            let leave = Leave {
                map,
                id: task_id,
                task: tokio::task::id(),
            };
            let last = work.await;
            drop(leave);
            if let Some(line) = last {
                answers.send(line).await;
            }
        });
        let Some(handle) = handle else {
            return false;
        };
        guard.insert(id, handle);
        true
    }

    /// Whether `id` names a request (a call or a listen) still in flight: it cannot name a
    /// second one, since a cancel naming it would be ambiguous, and the first one's end
    /// would take the second's entry out of the map.
    fn is_in_flight(&self, id: &RequestId) -> bool {
        let map = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        map.contains_key(id)
    }

    /// Handles one line: the line to write at once (after what is queued), if any. A
    /// request that completes in its first poll is answered here, with no task to spawn;
    /// the others continue as tasks, cancellable, whose answers go through [`Answers`].
    /// Must run in the runtime's context (tasks are spawned on it).
    pub(super) fn line(&self, line: Line) -> Option<String> {
        // Reap finished tasks so the set does not grow.
        {
            let mut tasks = self.tasks();
            while tasks.set.try_join_next().is_some() {}
        }
        let bytes = match line {
            Line::Message(b) => b,
            Line::TooLong(_) => {
                let e = RpcError::parse_error(format!("line longer than {MAX_LINE} bytes"));
                return Some(unread(Reply::rejection(
                    None,
                    Rejection::new(ErrorClass::Malformed, e),
                )));
            }
            Line::Eof => return None,
        };
        let trimmed = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
        // A UTF-8 byte order mark, which some writers put before their text (RFC 8259
        // lets a parser ignore it): the message after it is served.
        let trimmed = trimmed.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(trimmed);
        if trimmed.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let msg = match parse_strict(trimmed) {
            Ok(v) => v,
            Err(e) => return Some(unread(Reply::unparsable(trimmed, e))),
        };
        self.message(msg, trimmed.len())
    }

    /// Serves one message, read from a line of `size` bytes.
    fn message(&self, msg: Value, size: usize) -> Option<String> {
        let server = &self.server;
        // The legacy era: `initialize` opens the process's one session; later messages
        // without per-request `_meta` belong to it. Modern requests are served
        // statelessly all along.
        if server.opens_session(&msg) && self.session.get().is_none() {
            return Some(self.open_session(msg));
        }
        let legacy = self.session.get().filter(|_| !is_modern(&msg));
        if let (Some(s), Value::Array(batch)) = (legacy, &msg) {
            // Its calls take units of their own; its bytes are held while it runs.
            let Some(bytes) = server.inner.hold_bytes(size) else {
                crate::telemetry::cap_reached("too many request bytes in flight");
                return Some(Reply::rejection(None, Rejection::busy_bytes()).body);
            };
            self.batch(batch, s, bytes);
            return None;
        }
        let prepared = match legacy {
            Some(s) => server.prepare_legacy(msg, s, Streams::Shared(self.tx.clone()), None),
            None => server.prepare(msg, &NoGuard, Streams::Shared(self.tx.clone())),
        };
        match prepared {
            Prepared::Answer => None,
            Prepared::Reply(r) => Some(r.body),
            Prepared::Notification { method, params } => {
                if method == methods::NOTIFICATION_CANCELLED {
                    cancel(&self.in_flight, params.as_ref());
                    // A request of a 2025-03-26 batch is the session's, not the map's.
                    if let Some(s) = self.session.get() {
                        s.cancel(params.as_ref());
                    }
                }
                None
            }
            Prepared::Listen(listen) => self.listen(listen),
            Prepared::Call(job) => {
                let id = job.id().clone();
                let refused = |r: Rejection| Some(Reply::rejection(Some(&id), r).body);
                if self.is_in_flight(&id) {
                    return refused(Rejection::malformed("this request id is already in flight"));
                }
                let Some(mut slot) = server.inner.admit() else {
                    crate::telemetry::cap_reached("too many requests in flight");
                    return refused(Rejection::busy());
                };
                // Its line's bytes (and the JSON read from them) are held until it ends.
                if !server.inner.weigh(&mut slot, size) {
                    crate::telemetry::cap_reached("too many request bytes in flight");
                    return refused(Rejection::busy_bytes());
                }
                // The first poll, with no waker: what is still pending is spawned, and
                // the task's first poll registers its own waker wherever this one did.
                // (`Run` is `Unpin`: its work is boxed already, so it moves freely.)
                let mut run = job.run();
                let first = self.sections.sync_scope(|| {
                    std::pin::Pin::new(&mut run).poll(&mut Context::from_waker(Waker::noop()))
                });
                if let Poll::Ready(reply) = first {
                    drop(slot);
                    return Some(reply.body);
                }
                let spawned =
                    self.spawn_request(id.clone(), slot, async move { Some(run.await.body) });
                if !spawned {
                    return refused(closing());
                }
                None
            }
        }
    }

    // The legacy initialize, batches and listen streams are rare: each is a function of
    // its own, kept out of `message`, so the stack frame every `tools/call` runs on (on
    // the reading thread, whose touched stack stays resident) is not sized for their
    // futures, which are moved by value on their way into a task.

    /// `initialize`: opens the process's one session. The reply to write.
    #[inline(never)]
    fn open_session(&self, msg: Value) -> String {
        #[cfg(feature = "metrics")]
        let observed = crate::server::metrics::begin_initialize(&self.server.inner);
        let (opened, reply) = self.server.initialize(msg, "stdio".into());
        #[cfg(feature = "metrics")]
        if let Some(obs) = observed {
            crate::server::metrics::end(obs, &reply);
        }
        if let Some(s) = opened {
            s.log_opened();
            s.set_outbound(Some(self.tx.clone()));
            s.forward_changes(&self.server.inner);
            let _ = self.session.set(s);
        }
        reply.body
    }

    /// A JSON-RPC batch (2025-03-26 allows them; later revisions do not), run as a task
    /// of session `s`; its answer is queued.
    #[inline(never)]
    fn batch(&self, batch: &[Value], s: &Arc<Session>, bytes: crate::server::slot::Slot) {
        let batch = batch.to_vec();
        let s = Arc::clone(s);
        let server = self.server.clone();
        let answers = self.answers();
        let spawned = self.spawn(async move {
            // No caller on stdio, so no scope refuses a batch; were one to, its answer.
            let answer = server
                .run_batch(batch, &s, Streams::Shared(answers.tx.clone()), None)
                .await;
            drop(bytes);
            if let Some(line) = answer.unwrap_or_else(|r| Some(r.body)) {
                answers.send(line).await;
            }
        });
        if spawned.is_none() {
            tracing::debug!("a batch read while the connection closes is dropped");
        }
    }

    /// A `subscriptions/listen` stream, run as a task: the line to write at once, if any.
    #[inline(never)]
    fn listen(&self, mut listen: Listen) -> Option<String> {
        // Several subscriptions can share the connection; each ends on
        // `notifications/cancelled` naming it, or gracefully at the end of input.
        if self.is_in_flight(listen.id()) {
            let r = Rejection::malformed("this request id is already in flight");
            return Some(Reply::rejection(Some(listen.id()), r).body);
        }
        listen.stop_with(self.end_of_input.clone());
        listen.cancel_on_teardown();
        let id = listen.id().clone();
        let tx = self.tx.clone();
        let spawned = self.spawn_request(id.clone(), (), async move {
            while let Some(msg) = listen.next().await {
                if tx.send(msg).await.is_err() {
                    break;
                }
            }
            None
        });
        (!spawned).then(|| Reply::rejection(Some(&id), closing()).body)
    }

    /// The end of input: nothing more is spawned, subscriptions end with their result,
    /// the session closes.
    pub(super) fn end_input(&self) {
        self.tasks().closed = true;
        self.end_of_input.cancel();
        if let Some(s) = self.session.get() {
            s.close();
        }
    }

    /// Waits for a task to end: `false` once none is left.
    pub(super) async fn join_next(&self) -> bool {
        std::future::poll_fn(|cx| self.tasks().set.poll_join_next(cx).map(|r| r.is_some())).await
    }

    /// Cancels what is still running, and waits until it has ended.
    pub(super) async fn cancel_all(&self) {
        self.tasks().set.abort_all();
        while self.join_next().await {}
    }
}

/// Where a spawned task's last line (a request's answer) goes: written by the task itself
/// when stdout is the process's and free, so a worker that finishes a request answers it
/// without waking another thread; queued otherwise (stdout busy, an async writer), after
/// whatever the request queued before (its notifications), which a direct write drains
/// first.
struct Answers {
    tx: mpsc::Sender<String>,
    direct: Option<Arc<Mutex<StdOut>>>,
}

impl Answers {
    async fn send(&self, line: String) {
        let line = match &self.direct {
            Some(out) => match try_put(out, line) {
                Put::Written => return,
                Put::Busy(line) => line,
                // Queued empty, for the forwarder to wake and find stdout failed.
                Put::Failed => String::new(),
            },
            None => line,
        };
        let _ = self.tx.send(line).await;
    }
}

/// The connection's running tasks; `closed` once it winds down.
struct Tasks {
    set: JoinSet<()>,
    closed: bool,
}

/// The answer to a request read as the connection winds down.
fn closing() -> Rejection {
    Rejection::new(
        ErrorClass::Busy,
        RpcError::internal("The server is shutting down; try again later"),
    )
}

/// Whether a message carries per-request `_meta` (the modern era).
fn is_modern(msg: &Value) -> bool {
    msg.get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(crate::protocol::keys::PROTOCOL_VERSION))
        .is_some()
}

/// The answer to a line that is not a JSON message (or too long to read), counted as the
/// HTTP transport counts a body that is not JSON: under `method="unknown"`.
fn unread(reply: Reply) -> String {
    #[cfg(feature = "metrics")]
    crate::server::metrics::rejected("unknown", &reply);
    reply.body
}

/// A spawned request's entry in the in-flight map, taken out when the task ends (or its
/// future is dropped), but only while it is still this task's: a cancel takes the entry
/// out itself, and the client may then reuse the id for another request at once.
struct Leave {
    map: InFlight,
    id: RequestId,
    task: tokio::task::Id,
}

impl Drop for Leave {
    fn drop(&mut self) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.get(&self.id).is_some_and(|h| h.id() == self.task) {
            map.remove(&self.id);
        }
    }
}

/// `notifications/cancelled {requestId}`: drop the request's future. Unknown, finished or
/// malformed cancels are ignored.
fn cancel(in_flight: &Mutex<HashMap<RequestId, AbortHandle>>, params: Option<&Value>) {
    let Some(id) = params
        .and_then(|p| p.get("requestId"))
        .and_then(RequestId::from_value)
    else {
        return;
    };
    if let Some(h) = in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id)
    {
        tracing::debug!(%id, "request cancelled by the client");
        h.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_takes_only_its_own_entry_out_of_the_in_flight_map() {
        let map: InFlight = Arc::default();
        let id = RequestId::from_value(&serde_json::json!(7)).unwrap();
        // Two tasks' handles; each task reports its own id.
        let (first, second) = (
            tokio::spawn(async { tokio::task::id() }),
            tokio::spawn(async { tokio::task::id() }),
        );
        let (a, b) = (first.abort_handle(), second.abort_handle());
        let (ta, tb) = (first.await.unwrap(), second.await.unwrap());
        // The entry is the second task's (the first was cancelled, the id reused): the
        // first one's end leaves it alone, the second one's takes it out.
        drop(a);
        map.lock().unwrap().insert(id.clone(), b);
        let leave = |task| Leave {
            map: Arc::clone(&map),
            id: id.clone(),
            task,
        };
        drop(leave(ta));
        assert!(map.lock().unwrap().contains_key(&id));
        drop(leave(tb));
        assert!(!map.lock().unwrap().contains_key(&id));
    }

    #[tokio::test]
    async fn a_request_task_that_panics_leaves_the_in_flight_map() {
        let map: InFlight = Arc::default();
        let id = RequestId::from_value(&serde_json::json!("p")).unwrap();
        let mut set = tokio::task::JoinSet::new();
        {
            // Held until the handle is in, as `spawn_request` does.
            let mut guard = map.lock().unwrap();
            let (m, task_id) = (Arc::clone(&map), id.clone());
            let handle = set.spawn(async move {
                let _leave = Leave {
                    map: m,
                    id: task_id,
                    task: tokio::task::id(),
                };
                panic!("past the handler's guard");
            });
            guard.insert(id.clone(), handle);
        }
        assert!(set.join_next().await.unwrap().unwrap_err().is_panic());
        assert!(!map.lock().unwrap().contains_key(&id));
    }
}

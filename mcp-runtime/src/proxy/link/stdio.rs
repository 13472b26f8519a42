//! The stdio wire, one run at a time: a [`Session`] is one connection to a child's stdin
//! and stdout (or to an in-process pipe), with the requests waiting for their answers on
//! it, its writer (`stdin.rs`) and reader, and, for a child, the task that sees it exit
//! (`child.rs`).
//! A session ends for good (its stdout ends, its child exits, a write to its stdin fails
//! or makes no progress for its stall limit, or the link goes): what waits on it fails
//! at once, and the link may start another (`respawn.rs`).

use super::super::routing::{Askers, Changes, route};
use super::child::{Process, watch};
use super::stdin::write;
use super::{MAX_MESSAGE, Told, UpstreamError, excerpt, gone};
use crate::transport::stdio::lines::{Line, Lines, Overlong};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The requests of a session waiting, by id: each gets its answer, or why it has none.
pub(crate) type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, UpstreamError>>>>>;

/// What one run of a stdio upstream is reached through: its stdout, its stdin, and the
/// child, if it is one (an in-process pipe has none).
pub(crate) struct Pipes {
    pub(crate) read: Box<dyn AsyncRead + Unpin + Send>,
    pub(crate) write: Box<dyn AsyncWrite + Unpin + Send>,
    pub(crate) child: Option<Box<dyn Process>>,
}

/// One connection to a stdio upstream (one run of its child).
pub(crate) struct Session {
    pub(crate) out: mpsc::Sender<String>,
    pub(crate) pending: Pending,
    /// The requests of `pending` that are polls of a task (`tasks/get`): a question
    /// that comes meanwhile is not about them (see `routing::route`).
    pub(crate) polls: Mutex<std::collections::HashSet<u64>>,
    pub(crate) askers: Askers,
    /// Cancelled when it ended; a child of the link's `dropped`.
    pub(crate) closed: CancellationToken,
    /// Cancelled once its child is gone, with its process group (killed, or exited, and
    /// reaped), or at once when it has none: the next run starts after.
    pub(crate) child_gone: CancellationToken,
    /// When it began.
    pub(crate) started: Instant,
    /// When it ended, and how.
    end: Mutex<End>,
    /// The last requests given up (their time ran out, or their caller went): a late
    /// answer to one is no surprise. Each with when it was given up, and whether its late
    /// answer came.
    given_up: Mutex<VecDeque<GivenUp>>,
    /// Where what it says wrong is told (an answer to no request, say), naming its
    /// program.
    pub(crate) told: Told,
}

/// How many given-up requests a session remembers.
const GIVEN_UP_KEPT: usize = 1024;

/// How long a request given up may still be running upstream for all we know (we
/// cancelled it, but cancellation is advisory, and a cancelled request need not be
/// answered): meanwhile a question or log message from the upstream may be about it, so
/// none is taken as another call's.
const MAY_STILL_RUN: Duration = Duration::from_secs(60);

/// A request given up.
struct GivenUp {
    id: u64,
    at: Instant,
    /// Its late answer came: it runs no more.
    answered: bool,
}

impl Session {
    /// Whether a request given up may still be running upstream ([`MAY_STILL_RUN`]).
    pub(crate) fn may_still_run_given_up(&self) -> bool {
        let given_up = self.given_up.lock().unwrap_or_else(|e| e.into_inner());
        given_up
            .iter()
            .rev()
            .take_while(|g| g.at.elapsed() < MAY_STILL_RUN)
            .any(|g| !g.answered)
    }
}

/// How a session ended, or, once its child's exit is seen, will end: the first real
/// reason known wins.
#[derive(Default)]
struct End {
    /// When it ended; `None` while it runs.
    at: Option<Instant>,
    /// How, once known: its child's exit status, or why this side took it for gone, or
    /// what was seen (its stdout closed).
    how: Option<String>,
    /// Whether `how` is a real reason (its child's exit status, or why this side took it
    /// for gone), never replaced; what was seen is replaced by the exit status that
    /// follows.
    firm: bool,
    /// Whether this side took it for gone (its child stopped reading its stdin): `how`
    /// says why, and stays when the child, killed for it, exits.
    taken: bool,
}

impl Session {
    /// Starts the writer, the reader and (for a child) the watcher of `pipes`; messages
    /// that are not answers are routed (`route`), list changes told to `changes`.
    /// `program` names the upstream in logs; `stall`, if given, is how long a write to it
    /// may make no progress before it is taken for gone ([`Session::take_for_gone`]).
    pub(crate) fn open(
        pipes: Pipes,
        changes: &Arc<Changes>,
        dropped: &CancellationToken,
        program: &str,
        stall: Option<Duration>,
    ) -> Arc<Session> {
        let (out, queue) = mpsc::channel::<String>(256);
        let session = Arc::new(Session {
            out,
            pending: Arc::default(),
            polls: Mutex::default(),
            askers: Arc::default(),
            closed: dropped.child_token(),
            child_gone: CancellationToken::new(),
            started: Instant::now(),
            end: Mutex::default(),
            given_up: Mutex::default(),
            told: Told::new(program),
        });
        let has_child = pipes.child.is_some();
        tokio::spawn(write(Arc::clone(&session), pipes.write, queue, stall));
        tokio::spawn(read(
            Arc::clone(&session),
            pipes.read,
            Arc::clone(changes),
            has_child,
        ));
        if let Some(child) = pipes.child {
            let (dropped, program) = (dropped.clone(), program.to_owned());
            tokio::spawn(watch(Arc::clone(&session), child, dropped, program));
        } else {
            session.child_gone.cancel();
        }
        session
    }

    /// Whether it still runs.
    pub(crate) fn is_open(&self) -> bool {
        !self.closed.is_cancelled()
    }

    /// Ends it (`how`: why, unless it is known already): every request waiting on it
    /// fails at once, and calls take no more of its requests.
    pub(crate) fn close(&self, how: &str) {
        {
            let mut end = self.lock_end();
            end.how.get_or_insert_with(|| how.to_owned());
            end.at.get_or_insert_with(Instant::now);
        }
        self.closed.cancel();
        let waiting: Vec<_> = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.drain().map(|(_, tx)| tx).collect()
        };
        for tx in waiting {
            let _ = tx.send(Err(self.gone()));
        }
        self.askers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Takes it for gone, though its child may still run (`why`: it stopped reading its
    /// stdin), unless it ended already or its child's exit was seen (then it ends as that
    /// says): it ends as [`Session::close`] ends it, its child is killed at once (by its
    /// watcher), and `why` is what its requests are told, not the exit status the kill
    /// brings. Whether it was taken for gone (to be told once).
    pub(crate) fn take_for_gone(&self, why: &str) -> bool {
        let taken = {
            let mut end = self.lock_end();
            let taken = end.at.is_none() && !end.firm;
            if taken {
                *end = End {
                    at: None,
                    how: Some(why.to_owned()),
                    firm: true,
                    taken: true,
                };
            }
            taken
        };
        self.close(why);
        taken
    }

    /// Whether this side took it for gone ([`Session::take_for_gone`]).
    pub(super) fn taken(&self) -> bool {
        self.lock_end().taken
    }

    /// Its child exited, `how` (its exit status): what it is said to have ended with,
    /// unless a real reason was known first (this side took it for gone, or its exit was
    /// seen before). It may run on a moment, for what the child wrote to be read.
    pub(super) fn exited(&self, how: String) {
        let mut end = self.lock_end();
        if !end.firm {
            end.how = Some(how);
            end.firm = true;
        }
    }

    fn lock_end(&self) -> std::sync::MutexGuard<'_, End> {
        self.end.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When it ended and how (`None` while it runs).
    pub(crate) fn end(&self) -> Option<(Instant, String)> {
        let end = self.lock_end();
        let how = end.how.clone().unwrap_or_else(|| "it ended".to_owned());
        end.at.map(|at| (at, how))
    }

    /// The error of a request that cannot have its answer on it: it ended.
    pub(crate) fn gone(&self) -> UpstreamError {
        let end = self.lock_end();
        match (&end.how, end.taken) {
            (Some(how), true) => gone(format!("the upstream server was killed: {how}")),
            (Some(how), false) => gone(format!("the upstream server exited ({how})")),
            (None, _) => gone("the upstream server exited"),
        }
    }

    /// Sends one line (a notification, or an answer to a request of the upstream).
    pub(crate) async fn send(&self, line: String) -> Result<(), UpstreamError> {
        if !self.is_open() {
            return Err(self.gone());
        }
        self.out.send(line).await.map_err(|_| self.gone())
    }

    /// Sends a request; where its answer will come, and its place among the requests
    /// waiting for one (see [`Waiting`]; `cancel`: whether the upstream is told when it is
    /// given up, which `initialize` never is).
    pub(crate) async fn enqueue(
        self: &Arc<Self>,
        id: u64,
        msg: &Value,
        cancel: bool,
    ) -> Result<(oneshot::Receiver<Result<Value, UpstreamError>>, Waiting), UpstreamError> {
        if !self.is_open() {
            return Err(self.gone());
        }
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        let waiting = Waiting {
            id,
            session: Arc::clone(self),
            cancel,
        };
        self.out
            .send(msg.to_string())
            .await
            .map_err(|_| self.gone())?;
        Ok((rx, waiting))
    }

    /// One request and its answer (the whole message), or why there is none; given up
    /// (dropped), it is forgotten and, unless `cancel` is false, cancelled upstream.
    pub(crate) async fn exchange(
        self: &Arc<Self>,
        id: u64,
        msg: &Value,
        cancel: bool,
    ) -> Result<Value, UpstreamError> {
        let (rx, _waiting) = self.enqueue(id, msg, cancel).await?;
        tokio::select! {
            a = rx => a.unwrap_or_else(|_| Err(self.gone())),
            () = self.closed.cancelled() => Err(self.gone()),
        }
    }
}

/// Reader: answers go to their request; a request of the server goes to the one call in
/// flight when it is one this proxy passes on, else it gets the answer it can have; list
/// changes are told. It ends with the upstream's stdout, or with the session.
async fn read(
    session: Arc<Session>,
    stdout: Box<dyn AsyncRead + Unpin + Send>,
    changes: Arc<Changes>,
    has_child: bool,
) {
    // Lines past the limit are skipped as they come, never buffered whole.
    let stdout = BufReader::with_capacity(64 * 1024, stdout);
    let mut lines = Lines::new(stdout, MAX_MESSAGE);
    loop {
        let next = tokio::select! {
            l = lines.next() => l,
            () = session.closed.cancelled() => return,
        };
        let line = match next {
            Ok(Line::Message(line)) => line,
            Ok(Line::TooLong(long)) => {
                too_long(&long, &session.pending);
                continue;
            }
            Ok(Line::Eof) => break,
            Err(e) => {
                tracing::warn!("reading the upstream server's stdout: {e}");
                break;
            }
        };
        let Some(msg) = message(&line, &session.pending) else {
            continue;
        };
        if msg.get("method").is_some() {
            if let Some(reply) = route(&msg, &session.askers, &changes, &Arc::downgrade(&session)) {
                let _ = session.out.send(reply.to_string()).await;
            }
            continue;
        }
        deliver(msg, &session);
    }
    if has_child {
        // The watcher tells how the child ended.
        tracing::debug!("the upstream server closed its stdout");
    } else {
        tracing::warn!("the upstream server closed its stdout");
    }
    session.close("it closed its stdout");
}

/// Gives an answer to the request it answers. Its
/// `id` is ours (a number), or the same number written as a string (some servers echo
/// ids as strings). What is not an answer (no `result` or `error`: a JSON log line, `1`)
/// is told at debug, as is a late answer to a request given up; one to no request (an
/// id we never sent) at warn, naming its id, at most once in 10 s per run (the others at
/// debug, counted in the next warning: [`Told`]), and dropped: we cannot know whose it
/// was.
fn deliver(msg: Value, session: &Session) {
    let waiting = {
        let mut pending = session.pending.lock().unwrap_or_else(|e| e.into_inner());
        waiting_id(msg.get("id"), &pending).and_then(|n| pending.remove(&n))
    };
    if let Some(tx) = waiting {
        let _ = tx.send(Ok(msg));
        return;
    }
    if msg.get("result").is_none() && msg.get("error").is_none() {
        // A JSON log line, `1`, `[]`: not an answer.
        tracing::debug!("the upstream server wrote JSON that is not a message: skipped");
        return;
    }
    let id = msg.get("id").map_or_else(
        || "none".to_owned(),
        |id| excerpt(id.to_string().as_bytes()),
    );
    let late = our_id(msg.get("id")).is_some_and(|n| {
        let mut given_up = session.given_up.lock().unwrap_or_else(|e| e.into_inner());
        given_up
            .iter_mut()
            .find(|g| g.id == n)
            .map(|g| g.answered = true)
            .is_some()
    });
    if late {
        tracing::debug!("the upstream server answered id {id}, given up already: dropped");
        return;
    }
    let error = msg
        .get("error")
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map(|m| format!(" (its error: {})", excerpt(m.as_bytes())))
        .unwrap_or_default();
    session.told.tell(format_args!(
        "the upstream server answered id {id}, which no request waits for (never sent, or given up already): dropped{error}"
    ));
}

/// The request id `id` names if it is one of ours: a number, or its decimal form as a
/// string (`"7"` for 7, not `"07"`).
pub(crate) fn our_id(id: Option<&Value>) -> Option<u64> {
    match id? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => id_in_string(s),
        _ => None,
    }
}

/// Our request id written as a string: its decimal form exactly.
pub(crate) fn id_in_string(s: &str) -> Option<u64> {
    s.parse::<u64>().ok().filter(|n| n.to_string() == s)
}

/// The id of the request waiting in `pending` that `id` names: the number itself, or
/// its decimal form as a string (`"7"` for 7, not `"07"`).
fn waiting_id<T>(id: Option<&Value>, pending: &HashMap<u64, T>) -> Option<u64> {
    let n = our_id(id)?;
    pending.contains_key(&n).then_some(n)
}

/// One line a stdio upstream wrote, as a message; `None` when it is not one (skipped, and
/// an excerpt told at debug, never to a client). A line that is not UTF-8 is told at warn,
/// and when it reads as an answer once its bad bytes are replaced, the request it answers
/// fails at once, rather than at its time limit.
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
            if let Some(msg) = lenient.filter(|m| m.get("method").is_none()) {
                let id = {
                    let pending = pending.lock().unwrap_or_else(|e| e.into_inner());
                    waiting_id(msg.get("id"), &pending)
                };
                if let Some(id) = id {
                    fail(pending, id, "it answered with a line that is not UTF-8");
                }
            }
            return None;
        }
    };
    let msg = serde_json::from_str::<Value>(text);
    if msg.is_err() {
        // Often a banner or a stray print; what it says is for the operator only.
        tracing::debug!(
            "the upstream server wrote a line that is not JSON, skipped: {}",
            excerpt(line)
        );
    }
    msg.ok()
}

/// A line over [`MAX_MESSAGE`], skipped: told at warn with its size, and when it is an
/// answer whose id its ends show ([`overlong::answer_id`](super::super::overlong::answer_id)),
/// its request fails at once; otherwise that request ends at its time limit.
fn too_long(long: &Overlong, pending: &Pending) {
    tracing::warn!(
        "the upstream server wrote a line of {} bytes, over the limit of {MAX_MESSAGE}: skipped",
        long.len
    );
    if let Some(id) = super::super::overlong::answer_id(&long.head, &long.tail) {
        let why = format!(
            "its answer was {} bytes, over the limit of {MAX_MESSAGE}",
            long.len
        );
        fail(pending, id, &why);
    }
}

/// Ends the request `id`, if it is waiting, with `why` it has no answer.
fn fail(pending: &Pending, id: u64, why: &str) {
    let waiting = pending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id);
    if let Some(tx) = waiting {
        let _ = tx.send(Err(gone(why)));
    }
}

/// A request waiting for its answer: in its session's `pending` (and, for a call, in its
/// `askers`) while this lives. Dropped before the answer came (given up: its caller went,
/// or its time ran out), it is taken out of both, and the upstream is told
/// (`notifications/cancelled`) unless `cancel` is false.
pub(crate) struct Waiting {
    id: u64,
    session: Arc<Session>,
    cancel: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let id = self.id;
        self.session
            .askers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(n, _)| *n != id);
        let unanswered = self
            .session
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
            .is_some();
        if unanswered {
            let mut given_up = self
                .session
                .given_up
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if given_up.len() == GIVEN_UP_KEPT {
                given_up.pop_front();
            }
            given_up.push_back(GivenUp {
                id,
                at: Instant::now(),
                answered: false,
            });
        }
        if unanswered && self.cancel && self.session.is_open() {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "the proxied request was given up"}});
            let _ = self.session.out.try_send(note.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_names_its_request_by_number_or_by_the_numbers_decimal_string() {
        let pending: HashMap<u64, ()> = [(1, ()), (7, ())].into_iter().collect();
        let id = |v: Value| waiting_id(Some(&v), &pending);
        assert_eq!(id(json!(7)), Some(7));
        assert_eq!(id(json!("7")), Some(7));
        assert_eq!(id(json!("1")), Some(1));
        for other in [
            json!(8),
            json!("8"),
            json!("07"),
            json!(" 7"),
            json!("7.0"),
            json!(7.0),
            json!(-7),
            json!(null),
            json!([7]),
            json!("x"),
        ] {
            assert_eq!(id(other.clone()), None, "{other}");
        }
        assert_eq!(waiting_id(None, &pending), None);
    }
}

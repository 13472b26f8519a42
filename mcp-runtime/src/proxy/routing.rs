//! What a stdio upstream sends besides answers, and where it goes: its requests and
//! progress to the call they are about, list changes and resource updates told, the
//! rest answered at once.

use super::ongoing::Next;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::mpsc;

use super::link::Session;

/// A request the upstream sent us during one of our calls (2025-11-25: elicitation,
/// sampling, roots), to be answered with [`Link::respond`].
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    /// Its JSON-RPC id, as it came.
    pub(crate) id: Value,
    /// `{"method": .., "params": ..}`.
    pub(crate) request: Value,
    /// On stdio, the run of the child that asked: the answer goes to it, and nowhere
    /// once it ended (a child started again numbers its own requests anew). `None` over
    /// HTTP.
    pub(crate) from: Option<Weak<Session>>,
}

/// The calls in flight that take the upstream's requests (stdio: the wire does not say
/// which call a request belongs to, so it goes to the one call in flight).
pub(super) type Askers = Arc<Mutex<Vec<(u64, mpsc::Sender<Next>)>>>;

/// Where a message the upstream sent on stdio (not an answer) goes: a request it passes
/// on to the one call in flight (`from`: the session it came on, which its answer goes
/// to); progress to the call whose token it names (our request id); a log message to the
/// one call in flight; the rest as [`unsolicited`]. The reply to send at once, if any.
pub(super) fn route(
    msg: &Value,
    askers: &Askers,
    changes: &Changes,
    from: &Weak<Session>,
) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str)?;
    // Sends on these channels never wait, so the lock is held while routing.
    let calls = askers.lock().unwrap_or_else(|e| e.into_inner());
    // The one call, while no other request waits on the session either (but a task's
    // polls), nor may still run there after it was given up: a question or log message
    // may be about any request in flight (a `resources/read` of another client), and the
    // wire does not say which.
    let alone = |call: u64| {
        from.upgrade().is_none_or(|s| {
            let polls = s.polls.lock().unwrap_or_else(|e| e.into_inner());
            let pending = s.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.keys().all(|id| *id == call || polls.contains(id))
                && !s.may_still_run_given_up()
        })
    };
    let only = match calls.as_slice() {
        [(id, tx)] if alone(*id) => Some(tx),
        _ => None,
    };
    match (method, msg.get("id")) {
        (m, Some(id)) if passes(m) => {
            let asked = Next::Asked(Asked {
                id: id.clone(),
                request: json!({"method": m, "params": msg["params"]}),
                from: Some(Weak::clone(from)),
            });
            if let Some(tx) = only {
                return tx.try_send(asked).err().map(|e| refused_by_call(id, m, &e));
            }
            let why = if calls.is_empty() {
                format!("this proxy passes `{m}` on only during a call, to the client that made it")
            } else {
                format!(
                    "`{m}` came while several requests were in flight, and stdio does not say whose client to ask"
                )
            };
            Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}}))
        }
        ("notifications/progress", None) => {
            let token = msg["params"]["progressToken"].as_u64();
            if let Some((_, tx)) = calls.iter().find(|(id, _)| Some(*id) == token) {
                super::ongoing::tell(tx, Next::Progress(msg["params"].clone()));
            }
            None
        }
        ("notifications/message", None) => {
            if let Some(tx) = only {
                super::ongoing::tell(tx, Next::Log(msg["params"].clone()));
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
    /// Bumped each time a stdio child is started again.
    pub(crate) started: tokio::sync::watch::Sender<u64>,
}

impl Default for Changes {
    fn default() -> Self {
        Changes {
            lists: tokio::sync::watch::Sender::default(),
            updated: tokio::sync::broadcast::channel(256).0,
            started: tokio::sync::watch::Sender::default(),
        }
    }
}

impl Changes {
    fn list_changed(&self) {
        self.lists.send_modify(|n| *n += 1);
    }

    pub(crate) fn started_again(&self) {
        self.started.send_modify(|n| *n += 1);
    }
}

/// The requests an upstream may send during a call, which this proxy passes to its own
/// client; every other request gets `-32601`.
pub(super) fn passes(method: &str) -> bool {
    matches!(
        method,
        "elicitation/create" | "sampling/createMessage" | "roots/list"
    )
}

/// One notification or request the upstream sent outside of an answer: list changes are
/// told, requests get the answer they can have (`ping`, or an error).
pub(super) fn unsolicited(msg: &Value, changes: &Changes) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str)?;
    if method.ends_with("/list_changed") {
        changes.list_changed();
    }
    if method == "notifications/resources/updated"
        && let Some(uri) = msg["params"]["uri"].as_str()
    {
        let _ = changes.updated.send(uri.to_owned());
    }
    Some(outside_a_call(msg.get("id")?, method))
}

/// The answer to the upstream's request `method` (`id`) that came outside of a call, or
/// about a request of ours that is not one: `ping` answered, the rest `-32601`.
pub(super) fn outside_a_call(id: &Value, method: &str) -> Value {
    if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
            "message": format!("this proxy does not serve `{method}` outside of a call")}})
    }
}

/// The answer to the upstream's request `method` (`id`) that its call could not take: it
/// holds as many messages as it may ([`super::ongoing::ASKS_HELD`]), or it has ended.
pub(super) fn refused_by_call(
    id: &Value,
    method: &str,
    e: &mpsc::error::TrySendError<Next>,
) -> Value {
    let message = match e {
        mpsc::error::TrySendError::Full(_) => format!(
            "`{method}` came while the call already holds {} messages its client has not taken",
            super::ongoing::ASKS_HELD
        ),
        mpsc::error::TrySendError::Closed(_) => {
            format!("`{method}` came about a call that has ended")
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::ongoing::ASKS_HELD;

    #[test]
    fn a_call_nobody_reads_holds_a_bounded_number_of_messages() {
        use crate::proxy::ongoing::ROOM_FOR_QUESTIONS;
        let (tx, mut rx) = mpsc::channel(ASKS_HELD);
        let askers: Askers = Arc::new(Mutex::new(vec![(7, tx)]));
        let changes = Changes::default();
        let progress = json!({"method": "notifications/progress", "params": {"progressToken": 7, "progress": 1}});
        for _ in 0..10 * ASKS_HELD {
            assert_eq!(route(&progress, &askers, &changes, &Weak::new()), None);
        }
        // Progress stops short of the room kept for questions: they still pass...
        let ask = |n: u64| json!({"jsonrpc": "2.0", "id": n, "method": "roots/list", "params": {}});
        for n in 0..ROOM_FOR_QUESTIONS as u64 {
            assert_eq!(route(&ask(n), &askers, &changes, &Weak::new()), None, "{n}");
        }
        // ...until the call holds all it may: then one is refused at once (the upstream
        // is not left waiting).
        let refused = route(&ask(99), &askers, &changes, &Weak::new()).expect("an error reply");
        assert_eq!(refused["error"]["code"], -32603, "{refused}");
        let (mut progressed, mut asked) = (0, 0);
        while let Ok(next) = rx.try_recv() {
            match next {
                Next::Progress(_) => progressed += 1,
                Next::Asked(_) => asked += 1,
                _ => {}
            }
        }
        assert_eq!(
            (progressed, asked),
            (ASKS_HELD - ROOM_FOR_QUESTIONS, ROOM_FOR_QUESTIONS)
        );
        // Taken, there is room again: a question passes.
        assert_eq!(route(&ask(100), &askers, &changes, &Weak::new()), None);
        assert!(matches!(rx.try_recv(), Ok(Next::Asked(_))));
    }
}

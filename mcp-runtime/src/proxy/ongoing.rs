//! A request in flight that may bring more than its answer: the upstream's requests,
//! progress and log messages about it first; cancelled upstream when given up on.

use super::link::{UpstreamError, gone};
use super::routing::Asked;
use super::streams::Listen;
use serde_json::Value;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

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

/// Most messages about one call (questions, progress, log messages) held until the call
/// takes them: past it, progress and log messages are dropped, and a question is refused
/// a call nobody reads, such as one parked between rounds, holds no more).
pub(crate) const ASKS_HELD: usize = 64;

/// Room kept for questions: progress and log messages are dropped once fewer than this
/// many places are left, so a question finds one.
pub(crate) const ROOM_FOR_QUESTIONS: usize = 8;

/// Passes a progress or log message on to the call, unless that would leave less than
/// [`ROOM_FOR_QUESTIONS`] (then it is dropped: R-6).
pub(crate) fn tell(tx: &mpsc::Sender<Next>, note: Next) {
    if tx.capacity() > ROOM_FOR_QUESTIONS {
        let _ = tx.try_send(note);
    }
}

/// A request sent whose upstream may ask things before it answers. Dropped before its
/// answer, it is cancelled upstream (`notifications/cancelled`).
pub(crate) struct Ongoing {
    pub(super) id: u64,
    pub(super) asks: mpsc::Receiver<Next>,
    pub(super) answer: oneshot::Receiver<Result<Value, UpstreamError>>,
    pub(super) cancel: Option<Cancel>,
    /// How long to wait for the next question or the answer; `None`: as long as it takes
    /// (the caller watches the request some other way).
    pub(super) patience: Option<Duration>,
}

/// How a request given up on is cancelled upstream over HTTP: a POST, and the end of the
/// read of its event stream. (On stdio, the task waiting for the answer sees the
/// [`Ongoing`] go, and cancels it: see `link::stdio::Waiting`.)
pub(super) enum Cancel {
    Http(Box<Listen>, tokio::task::AbortHandle),
}

impl Ongoing {
    /// Waits for the next question or the answer for as long as it takes, instead of the
    /// upstream's time limit ([`DEFAULT_UPSTREAM_TIMEOUT`](super::link::DEFAULT_UPSTREAM_TIMEOUT)
    /// unless its options set one): for a request that may rightly stay silent longer
    /// (the result of a long task), which the caller watches some other way.
    pub(crate) fn without_time_limit(mut self) -> Self {
        self.patience = None;
        self
    }

    /// The next question, or the answer; [`UpstreamError::Timeout`] when neither comes
    /// within the upstream's time limit (unless [`Ongoing::without_time_limit`]).
    pub(crate) async fn next(&mut self) -> Next {
        let (asks, answer) = (&mut self.asks, &mut self.answer);
        let next = async {
            tokio::select! {
                biased;
                Some(n) = asks.recv() => n,
                a = answer => Next::Answer(
                    a.unwrap_or_else(|_| Err(gone("the upstream server went away")))),
            }
        };
        let next = match self.patience {
            Some(limit) => tokio::time::timeout(limit, next).await,
            None => Ok(next.await),
        };
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
        if let Some(Cancel::Http(peer, reading)) = self.cancel.take() {
            reading.abort();
            peer.cancel_later(self.id, "the proxied call was given up");
        }
    }
}

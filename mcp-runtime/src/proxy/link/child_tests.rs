//! How a stdio session with a child ends, against a fake child (its exit and its kill
//! in the test's hands) and a paused clock: what its requests are told, and how many
//! warnings.

use super::UpstreamError;
use super::child::{GRACE, Process};
use super::stdio::{Pipes, Session};
use super::tests::capture_logs;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A child that exits with what the test sends, or, killed, with SIGKILL.
struct Fake {
    exit: oneshot::Receiver<String>,
    killed: CancellationToken,
    how: Option<String>,
}

impl Fake {
    /// The fake, where its exit is sent, and its kill seen.
    fn new() -> (Fake, oneshot::Sender<String>, CancellationToken) {
        let (exit, exits) = oneshot::channel();
        let killed = CancellationToken::new();
        let fake = Fake {
            exit: exits,
            killed: killed.clone(),
            how: None,
        };
        (fake, exit, killed)
    }
}

impl Process for Fake {
    fn exited<'a>(&'a mut self, _: &'a (dyn Fn(&str) + Send + Sync)) -> BoxFuture<'a, String> {
        async move {
            if let Some(how) = &self.how {
                return how.clone();
            }
            let how = tokio::select! {
                how = &mut self.exit => how.unwrap_or_else(|_| "exit status: 0".into()),
                () = self.killed.cancelled() => "signal: 9 (SIGKILL)".to_owned(),
            };
            self.how = Some(how.clone());
            how
        }
        .boxed()
    }

    fn kill(&mut self) {
        self.killed.cancel();
    }
}

/// A session with the fake `child`, on stdin `write` and a stdout kept open (as a process
/// the child started may keep it); writes stall after 1 s without progress.
fn session(write: Box<dyn tokio::io::AsyncWrite + Unpin + Send>, child: Fake) -> Arc<Session> {
    let (stdout, theirs) = tokio::io::duplex(64);
    // Never closed: the test's end of the child's stdout lives as long as the runtime.
    std::mem::forget(theirs);
    let pipes = Pipes {
        read: Box::new(stdout),
        write,
        child: Some(Box::new(child)),
    };
    let dropped = CancellationToken::new();
    let stall = Some(Duration::from_secs(1));
    Session::open(pipes, &Arc::default(), &dropped, "fake", stall)
}

/// The warnings in `logs`.
fn warnings(logs: &Mutex<Vec<u8>>) -> Vec<String> {
    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    logs.lines()
        .filter(|l| l.contains("WARN"))
        .map(str::to_owned)
        .collect()
}

/// A child that exits while a process it started holds its stdin (unread) and stdout
/// open, a write to it stalled: the stall limit runs out in the grace its stdout has to
/// end, and its requests are told its exit status, the first real reason known, with one
/// warning. Before, they were told it was killed for not reading its stdin, the exit
/// status coming only at the end of the grace.
#[tokio::test(start_paused = true)]
async fn an_exit_seen_first_is_told_though_a_write_stalls_in_the_grace() {
    let (logs, _guard) = capture_logs();
    let (fake, exit, _killed) = Fake::new();
    let (stdin, _unread) = tokio::io::duplex(8);
    let session = session(Box::new(stdin), fake);
    // Larger than the pipe: its write stalls at once, and the limit runs out at 1 s.
    let big =
        json!({"jsonrpc": "2.0", "id": 1, "method": "big", "params": {"pad": "x".repeat(64)}});
    let exiting = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        exit.send("exit status: 3".into()).unwrap();
    };
    let (answer, ()) = tokio::join!(session.exchange(1, &big, false), exiting);
    assert_eq!(
        answer,
        Err(UpstreamError::Unavailable(
            "the upstream server exited (exit status: 3)".into()
        ))
    );
    tokio::time::sleep(GRACE * 2).await;
    let warned = warnings(&logs);
    assert_eq!(warned.len(), 1, "{warned:#?}");
    assert!(warned[0].contains("exited (exit status: 3)"), "{warned:#?}");
}

/// A stdin whose write never makes progress, and which ends its session (as its reader
/// does when the child's stdout ends) when it is polled at `at` or later: the stall limit
/// and the end are seen in the same poll.
struct ClosesAt {
    at: Instant,
    session: Arc<OnceLock<Arc<Session>>>,
}

impl tokio::io::AsyncWrite for ClosesAt {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if Instant::now() >= self.at
            && let Some(session) = self.session.get()
        {
            session.close("it closed its stdout");
        }
        Poll::Pending
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Pending
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// A session that ends (its stdout ended) as a write to it stalls, in the same poll:
/// the requests are told what was seen first, and one warning says how the child ended
/// (killed at the end of its grace). Before, the writer also warned that it was taken
/// for gone and killed, which it was not.
#[tokio::test(start_paused = true)]
async fn a_stall_seen_as_the_session_ends_is_not_told_twice() {
    let (logs, _guard) = capture_logs();
    let (fake, _exit, killed) = Fake::new();
    let slot = Arc::new(OnceLock::new());
    let stdin = ClosesAt {
        at: Instant::now() + Duration::from_secs(1),
        session: Arc::clone(&slot),
    };
    let session = session(Box::new(stdin), fake);
    slot.set(Arc::clone(&session)).ok().unwrap();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "any"});
    let answer = session.exchange(1, &msg, false).await;
    assert_eq!(
        answer,
        Err(UpstreamError::Unavailable(
            "the upstream server exited (it closed its stdout)".into()
        ))
    );
    tokio::time::sleep(GRACE * 2).await;
    assert!(killed.is_cancelled(), "killed at the end of its grace");
    let warned = warnings(&logs);
    assert_eq!(warned.len(), 1, "{warned:#?}");
    assert!(
        warned[0].contains("exited (signal: 9 (SIGKILL))"),
        "{warned:#?}"
    );
}

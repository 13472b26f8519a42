//! The child of a stdio session: how it is started ([`spawn`]), and its watcher, which
//! ends the session when the child exits and kills the child when the session ends
//! first. The watcher sees the child through [`Process`], which the tests fake.

use super::stdio::{Pipes, Session};
use super::{UpstreamError, gone};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a child that exited has for its stdout to end (what it wrote before is still
/// read), and a child whose stdout ended has to exit on its own before it is killed.
pub(super) const GRACE: Duration = Duration::from_millis(500);

/// The child of a stdio session, as its watcher sees it.
pub(crate) trait Process: Send + 'static {
    /// Waits until it exited (on its own, or killed), then how (its exit status). Given
    /// up (dropped) before, it can be waited for again.
    fn exited(&mut self) -> BoxFuture<'_, String>;
    /// Kills it (nothing once it is gone).
    fn kill(&mut self);
}

/// Starts `cmd` with piped stdin and stdout (its stderr goes to this process's); the
/// child is killed when it is dropped (by its session's watcher, once the session ended).
pub(crate) fn spawn(mut cmd: tokio::process::Command) -> Result<Pipes, UpstreamError> {
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
    Ok(Pipes {
        read: Box::new(stdout),
        write: Box::new(stdin),
        child: Some(Box::new(child)),
    })
}

impl Process for tokio::process::Child {
    fn exited(&mut self) -> BoxFuture<'_, String> {
        async move {
            match self.wait().await {
                Ok(s) => s.to_string(),
                Err(e) => format!("its exit status unknown: {e}"),
            }
        }
        .boxed()
    }

    fn kill(&mut self) {
        let _ = self.start_kill();
    }
}

/// Watcher: when the child exits, its session ends (once what it wrote before is read)
/// saying how (its exit status, whatever else is seen meanwhile), and a warning says so;
/// when its session ends first (its stdout ended, or it is given up), the child has a
/// moment to exit, then is killed. One taken for gone (it stopped reading its stdin: the
/// writer warned) is killed at once, and so is one whose link goes.
pub(super) async fn watch(
    session: Arc<Session>,
    mut child: Box<dyn Process>,
    dropped: CancellationToken,
    program: String,
) {
    let how = tokio::select! {
        how = child.exited() => {
            // Its own exit, seen first: what its requests are told, whatever comes in
            // the grace (a write to it stalling, with a process it started holding its
            // stdin).
            session.exited(how.clone());
            let _ = tokio::time::timeout(GRACE, session.closed.cancelled()).await;
            how
        }
        () = session.closed.cancelled() => {
            if dropped.is_cancelled() {
                child.kill();
                return;
            }
            if session.taken() {
                // It reads nothing: waiting for it to see its stdin closed is no use.
                child.kill();
            }
            match tokio::time::timeout(GRACE, child.exited()).await {
                Ok(how) => how,
                Err(_) => {
                    child.kill();
                    child.exited().await
                }
            }
        }
    };
    session.exited(how.clone());
    session.close(&how);
    if session.taken() {
        // Told at warn when it was taken for gone.
        tracing::debug!(program = %program, "the upstream server, taken for gone, was killed ({how})");
    } else if !dropped.is_cancelled() {
        tracing::warn!(program = %program, "the upstream server exited ({how})");
    }
}

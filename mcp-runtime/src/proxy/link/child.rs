//! The child of a stdio session: how it is started ([`spawn`]), in a process group of its
//! own on unix, and its watcher, which ends the session when the child exits and kills
//! the child when the session ends first; whatever is left of its group goes with it
//! either way. The watcher sees the child through [`Process`], which the tests fake.
//!
//! The group is signalled only while the child is not reaped, so its id cannot be
//! another's yet: a child that exited on its own is seen to (`waitid` without reaping)
//! before its group is killed and it is reaped. Where that cannot be seen (OpenBSD), the
//! group of a child that exited on its own is left as it is.

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
    /// Waits until it exited (on its own, or killed), then how (its exit status); what is
    /// left of its process group is killed before it is reaped, and `seen` is told how
    /// it exited first, when that is known before (so nothing the kill sets off, such as
    /// a helper letting go of its stdout, is taken for why it ended). Given up (dropped)
    /// before, it can be waited for again.
    fn exited<'a>(&'a mut self, seen: &'a (dyn Fn(&str) + Send + Sync)) -> BoxFuture<'a, String>;
    /// Kills it and its process group (nothing once it is reaped).
    fn kill(&mut self);
}

/// Starts `cmd` with piped stdin and stdout (its stderr goes to this process's). On unix
/// it runs in a process group of its own, which is killed with it: what it started (the
/// server a wrapper such as `npx` runs, a helper holding its stdout) goes with it. It is
/// killed when it is dropped (by its session's watcher, once the session ended, or with
/// the runtime).
pub(crate) fn spawn(mut cmd: tokio::process::Command) -> Result<Pipes, UpstreamError> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            // The error's text is told to the log; a client (of a child started again)
            // reads its kind alone.
            let program = cmd.as_std().get_program().to_string_lossy().into_owned();
            tracing::warn!(program = %program, "the upstream server cannot be started: {e}");
            return Err(gone(format!("cannot start it ({})", e.kind())));
        }
    };
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(gone("no pipes to it"));
    };
    #[cfg(unix)]
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    Ok(Pipes {
        read: Box::new(stdout),
        write: Box::new(stdin),
        child: Some(Box::new(Child {
            child,
            #[cfg(unix)]
            group,
            how: None,
        })),
    })
}

/// A child [`spawn`] started.
struct Child {
    child: tokio::process::Child,
    /// Its id, which is its process group's (it leads it), while it may be signalled:
    /// until the child is reaped, its id is given to no other process or group.
    #[cfg(unix)]
    group: Option<rustix::process::Pid>,
    /// How it ended, once reaped.
    how: Option<String>,
}

impl Child {
    /// Kills what is left of its group, unless it was reaped (then its id may be
    /// another's).
    fn kill_group(&self) {
        #[cfg(unix)]
        if let Some(group) = self.group {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    }

    /// Waits until it exited, without reaping it (its group still its own): how (as its
    /// `ExitStatus` reads), if that could be seen (on unix, with `waitid`: not on OpenBSD,
    /// whose children's groups are then killed only when the child is killed). A child
    /// stopped or continued has not exited.
    async fn exit_seen(&mut self) -> Option<String> {
        #[cfg(all(
            unix,
            not(any(
                target_os = "openbsd",
                target_os = "cygwin",
                target_os = "horizon",
                target_os = "redox"
            ))
        ))]
        {
            use rustix::io::Errno;
            use rustix::process::{WaitId, WaitIdOptions, waitid};
            use std::os::unix::process::ExitStatusExt;
            use tokio::signal::unix::{SignalKind, signal};
            let pid = self.group?;
            // A child that exits signals SIGCHLD: listened for before looking, none is
            // missed.
            let mut changed = signal(SignalKind::child()).ok()?;
            let exited = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
            loop {
                match waitid(WaitId::Pid(pid), exited) {
                    // As a wait status: the code in the second byte, or the signal (and
                    // 0x80 when it dumped core).
                    Ok(Some(s)) => {
                        let raw = match (s.exit_status(), s.terminating_signal()) {
                            (Some(code), _) if s.exited() => (code & 0xff) << 8,
                            (_, Some(sig)) if s.killed() => sig,
                            (_, Some(sig)) if s.dumped() => sig | 0x80,
                            _ => {
                                changed.recv().await?;
                                continue;
                            }
                        };
                        return Some(std::process::ExitStatus::from_raw(raw).to_string());
                    }
                    Ok(None) | Err(Errno::INTR) => {}
                    Err(_) => return None,
                }
                changed.recv().await?;
            }
        }
        #[cfg(not(all(
            unix,
            not(any(
                target_os = "openbsd",
                target_os = "cygwin",
                target_os = "horizon",
                target_os = "redox"
            ))
        )))]
        None
    }
}

impl Process for Child {
    fn exited<'a>(&'a mut self, seen: &'a (dyn Fn(&str) + Send + Sync)) -> BoxFuture<'a, String> {
        async move {
            if let Some(how) = &self.how {
                return how.clone();
            }
            if let Some(how) = self.exit_seen().await {
                // Told before the kill: a helper in its group that held its stdout lets go
                // of it once killed, and the session must not end for that first.
                seen(&how);
                self.kill_group();
            }
            let how = match self.child.wait().await {
                Ok(s) => s.to_string(),
                Err(e) => format!("its exit status unknown: {e}"),
            };
            #[cfg(unix)]
            {
                self.group = None;
            }
            self.how = Some(how.clone());
            how
        }
        .boxed()
    }

    fn kill(&mut self) {
        self.kill_group();
        let _ = self.child.start_kill();
    }
}

impl Drop for Child {
    /// Dropped before it was reaped (its link went, or its runtime), its group is killed
    /// (`kill_on_drop` kills the child alone).
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// Watcher: when the child exits, what is left of its process group is killed and its
/// session ends (once what it wrote before is read) saying how (its exit status, whatever
/// else is seen meanwhile), and a warning says so; when its session ends first (its
/// stdout ended, or it is given up), the child has a moment to exit, then is killed with
/// its group. One taken for gone (it stopped reading its stdin: the writer warned) is
/// killed at once, and so is one whose link goes. Its session's `child_gone` is
/// cancelled once it is reaped (or the link went): the next run may start.
pub(super) async fn watch(
    session: Arc<Session>,
    mut child: Box<dyn Process>,
    dropped: CancellationToken,
    program: String,
) {
    // However this ends (the runtime may drop it), the child is gone, or going.
    let _gone = session.child_gone.clone().drop_guard();
    // How it exited, told to the session as soon as it is known (before its group is
    // killed); the first real reason the session hears is what its requests are told.
    let seen = |how: &str| session.exited(how.to_owned());
    let how = tokio::select! {
        how = child.exited(&seen) => {
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
            match tokio::time::timeout(GRACE, child.exited(&seen)).await {
                Ok(how) => how,
                Err(_) => {
                    child.kill();
                    child.exited(&seen).await
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

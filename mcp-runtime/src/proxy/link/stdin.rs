//! The writer of a stdio session: one line per message to the upstream's stdin. A line
//! that cannot be written (the upstream closed its stdin) ends the session; so does one
//! that makes no progress for the session's stall limit (the upstream stopped reading its
//! stdin but keeps it open, alive or hung): it is taken for gone, so its requests fail at
//! once rather than at their time limits, the requests queued behind the line with them,
//! and the link starts it again on the next request.

use super::stdio::Session;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Why a line was not written.
#[derive(Debug, PartialEq)]
enum Unwritten {
    /// A write failed: the upstream closed its stdin.
    Closed,
    /// A write made no progress within the stall limit.
    Stalled,
}

/// Writer: one line per message, until the session ends. A write that fails ends it, and
/// one that makes no progress for `stall` (if given) takes it for gone, with a warning
/// naming the program (unless it ended meanwhile, or its child's exit was seen: then
/// what ended it is told, by the reader or the watcher).
pub(super) async fn write(
    session: Arc<Session>,
    mut stdin: Box<dyn AsyncWrite + Unpin + Send>,
    mut queue: mpsc::Receiver<String>,
    stall: Option<Duration>,
) {
    while let Some(line) = tokio::select! {
        l = queue.recv() => l,
        () = session.closed.cancelled() => None,
    } {
        let written = async {
            put(&mut stdin, line.as_bytes(), stall).await?;
            put(&mut stdin, b"\n", stall).await?;
            within(stall, stdin.flush())
                .await?
                .map_err(|_| Unwritten::Closed)
        };
        let written = tokio::select! {
            w = written => w,
            () = session.closed.cancelled() => return,
        };
        match written {
            Ok(()) => {}
            Err(Unwritten::Closed) => {
                session.close("it closed its stdin (a write to it failed)");
                return;
            }
            Err(Unwritten::Stalled) => {
                let secs = stall.unwrap_or_default().as_secs_f64();
                let why = format!(
                    "it stopped reading its stdin (a write to it made no progress for {secs} s)"
                );
                // Unless it ended first, or its child's exit was seen (then that is told).
                if session.take_for_gone(&why) {
                    tracing::warn!(
                        program = %session.told.name(),
                        "the upstream server is taken for gone, and killed: {why}"
                    );
                }
                return;
            }
        }
    }
}

/// Writes all of `bytes` to `to`, each write given `stall` (if any) to make progress: a
/// slow reader that takes a little at a time is waited for, one that takes nothing is
/// not.
async fn put<W: AsyncWrite + Unpin + ?Sized>(
    to: &mut W,
    bytes: &[u8],
    stall: Option<Duration>,
) -> Result<(), Unwritten> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = within(stall, to.write(rest))
            .await?
            .map_err(|_| Unwritten::Closed)?;
        if n == 0 {
            return Err(Unwritten::Closed);
        }
        rest = rest.get(n..).unwrap_or_default();
    }
    Ok(())
}

/// `step`'s outcome, unless it takes longer than `stall` (if given).
async fn within<T>(stall: Option<Duration>, step: impl Future<Output = T>) -> Result<T, Unwritten> {
    match stall {
        Some(limit) => tokio::time::timeout(limit, step)
            .await
            .map_err(|_| Unwritten::Stalled),
        None => Ok(step.await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Progress, however slow, keeps a write going; none for the stall limit ends it, at
    /// that limit.
    #[tokio::test(start_paused = true)]
    async fn a_write_ends_only_when_it_makes_no_progress_for_the_stall_limit() {
        let stall = Some(Duration::from_secs(1));
        let line = vec![b'x'; 64];
        // A reader taking 8 bytes every 900 ms: 8 of them, 7.2 s in all.
        let (mut ours, mut theirs) = tokio::io::duplex(8);
        let reading = tokio::spawn(async move {
            let mut got = Vec::new();
            let mut buf = [0u8; 8];
            while got.len() < 64 {
                tokio::time::sleep(Duration::from_millis(900)).await;
                let n = theirs.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            got
        });
        assert_eq!(put(&mut ours, &line, stall).await, Ok(()));
        assert_eq!(reading.await.unwrap(), line);
        // A reader taking nothing: the first 8 bytes fit, then no progress.
        let (mut ours, _theirs) = tokio::io::duplex(8);
        let began = tokio::time::Instant::now();
        assert_eq!(put(&mut ours, &line, stall).await, Err(Unwritten::Stalled));
        assert_eq!(began.elapsed(), Duration::from_secs(1));
        // A reader gone: the write fails.
        let (mut ours, theirs) = tokio::io::duplex(8);
        drop(theirs);
        assert_eq!(put(&mut ours, &line, stall).await, Err(Unwritten::Closed));
    }
}

//! stdout of `serve_stdio`, shared by the reading thread, the forwarder and the tasks that
//! write their answers themselves.
//!
//! Lines are written whole and in order: each is appended to one buffer, and the buffer is
//! written from where the last write stopped. The reading thread (not the runtime's) waits
//! in its writes for the client to read. A thread of the runtime never does (on Linux:
//! `pwritev2` with `RWF_NOWAIT`, which pipes and sockets support): what the client has no
//! room for stays in the buffer, and the forwarder writes it when stdout has room again
//! (tokio's reactor tells it). So a client that stops reading blocks no thread of the
//! runtime, and a signal or the drain's deadline still ends the connection. Where a write
//! cannot be made without waiting (other systems, a terminal, a file), it waits, as the
//! reading thread's do.

use super::{Stdio, wait_for};
use std::io;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::sync::mpsc;

/// The buffer's capacity kept between writes; a larger one (a large answer) is released.
const KEEP: usize = 64 * 1024;

/// What became of a line [`try_put`] was given.
pub(crate) enum Put {
    /// Written, or in the buffer, which the forwarder writes when stdout has room.
    Written,
    /// Someone else is writing (the reading thread, the forwarder or another task: the
    /// line would wait for them anyway), or the client has not read what is buffered: the
    /// line, for the queue.
    Busy(String),
    /// stdout failed: the line is dropped, and every later write fails too. The
    /// forwarder learns it from the next thing queued.
    Failed,
}

/// stdout and the queue of what spawned requests write.
pub(super) struct StdOut {
    bytes: Bytes,
    queue: mpsc::Receiver<String>,
    /// The forwarder's waker, for a task that leaves bytes in the buffer.
    forwarder: Option<Waker>,
    /// Whether stdout has room, from tokio's reactor (made when first needed).
    #[cfg(target_os = "linux")]
    room: Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>,
}

/// Whether a write may wait for the client to read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    Yes,
    No,
}

/// The bytes not yet written, and where they go.
struct Bytes {
    fd: Fd,
    buf: Vec<u8>,
    /// How much of `buf` is written.
    at: usize,
    /// The error stdout failed with: every later write fails with it, so nothing left in
    /// the buffer is written after it (a line would come out twice).
    failed: Option<io::ErrorKind>,
    /// Whether a write can be made without waiting (`RWF_NOWAIT`).
    nowait: bool,
}

/// stdout, taken as it is: a duplicate of the descriptor where there are descriptors (so
/// `std::io::stdout` stays usable by the application, and no buffer of its is used).
#[cfg(unix)]
type Fd = std::fs::File;
#[cfg(not(unix))]
type Fd = io::Stdout;

impl StdOut {
    pub(super) fn new(queue: mpsc::Receiver<String>) -> io::Result<Self> {
        #[cfg(unix)]
        let fd = std::fs::File::from(rustix::stdio::stdout().try_clone_to_owned()?);
        #[cfg(not(unix))]
        let fd = io::stdout();
        Ok(StdOut {
            bytes: Bytes {
                fd,
                buf: Vec::new(),
                at: 0,
                failed: None,
                nowait: cfg!(target_os = "linux"),
            },
            queue,
            forwarder: None,
            #[cfg(target_os = "linux")]
            room: None,
        })
    }

    /// Writes what is queued, then `line`, waiting for the client to read (the reading
    /// thread). `Err`: stdout is closed.
    pub(super) fn put(&mut self, line: &str) -> io::Result<()> {
        self.bytes.usable()?;
        self.take_queued();
        self.bytes.push(line);
        self.bytes.write(Wait::Yes).map(drop)
    }

    /// Appends what is queued to the buffer.
    fn take_queued(&mut self) {
        while let Ok(queued) = self.queue.try_recv() {
            self.bytes.push(&queued);
        }
    }

    /// One step of the forwarder: the rest of the buffer once stdout has room, or else the
    /// next queued line (with whatever else is queued). Ready when something was written
    /// (or stdout failed); what the client has no room for stays in the buffer, for the
    /// next step.
    fn poll_forward(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Err(e) = self.bytes.usable() {
            return Poll::Ready(Err(e));
        }
        if self.bytes.pending() {
            return self.poll_write(cx);
        }
        match self.queue.poll_recv(cx) {
            Poll::Ready(Some(first)) => {
                self.bytes.push(&first);
                self.take_queued();
                Poll::Ready(self.bytes.write(Wait::No).map(drop))
            }
            // The senders live as long as the connection's state.
            Poll::Ready(None) | Poll::Pending => {
                if !self
                    .forwarder
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    self.forwarder = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// What is queued and the whole buffer, written as stdout gets room.
    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Err(e) = self.bytes.usable() {
            return Poll::Ready(Err(e));
        }
        self.take_queued();
        match self.bytes.pending() {
            true => self.poll_write(cx),
            false => Poll::Ready(Ok(())),
        }
    }

    /// Writes the buffer to its end, as stdout gets room.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        #[cfg(target_os = "linux")]
        if self.bytes.nowait {
            if self.room.is_none() {
                let room = self.bytes.fd.try_clone().and_then(|fd| {
                    let fd = std::os::fd::OwnedFd::from(fd);
                    // SAFETY: the descriptor is owned by what is registered, so it stays
                    // open, and the same, for as long as the registration.
                    unsafe {
                        tokio::io::unix::AsyncFd::register_with_interest(
                            fd,
                            tokio::io::Interest::WRITABLE,
                        )
                    }
                    .map_err(|e| e.into_parts().1)
                });
                match room {
                    Ok(room) => self.room = Some(room),
                    // Not a descriptor the reactor can watch: wait in the write.
                    Err(_) => self.bytes.nowait = false,
                }
            }
            if let Some(room) = &self.room {
                loop {
                    let mut ready = match room.poll_write_ready(cx) {
                        Poll::Ready(Ok(ready)) => ready,
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                        Poll::Pending => return Poll::Pending,
                    };
                    match self.bytes.write(Wait::No) {
                        Ok(true) => return Poll::Ready(Ok(())),
                        Ok(false) => ready.clear_ready(),
                        Err(e) => return Poll::Ready(Err(e)),
                    }
                }
            }
        }
        let _ = cx;
        Poll::Ready(self.bytes.write(Wait::Yes).map(drop))
    }
}

impl Bytes {
    fn push(&mut self, line: &str) {
        self.buf.extend_from_slice(line.as_bytes());
        self.buf.push(b'\n');
    }

    /// Whether bytes are waiting for the client to read.
    fn pending(&self) -> bool {
        self.at < self.buf.len()
    }

    /// `Err` once stdout failed.
    fn usable(&self) -> io::Result<()> {
        match self.failed {
            Some(kind) => Err(kind.into()),
            None => Ok(()),
        }
    }

    /// Writes the buffer. `Ok(false)`: the client has no room for the rest, which stays
    /// (only with `Wait::No`).
    fn write(&mut self, wait: Wait) -> io::Result<bool> {
        self.usable()?;
        while self.pending() {
            match self.write_some(wait) {
                Ok(0) => return self.fail(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.at += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A non-blocking description (the flag is shared with whoever else holds
                // that pipe), or a write that may not wait.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match wait {
                    Wait::Yes => wait_for(Stdio::Out),
                    Wait::No => return Ok(false),
                },
                Err(e) => return self.fail(e),
            }
        }
        self.buf.clear();
        self.at = 0;
        if self.buf.capacity() > KEEP {
            self.buf = Vec::new();
        }
        Ok(true)
    }

    fn write_some(&mut self, wait: Wait) -> io::Result<usize> {
        let rest = &self.buf[self.at..];
        #[cfg(target_os = "linux")]
        if wait == Wait::No && self.nowait {
            use rustix::io::{Errno, ReadWriteFlags, pwritev2};
            // Offset -1: at the descriptor's position, as `write` (pipes have none).
            let slices = [io::IoSlice::new(rest)];
            match pwritev2(&self.fd, &slices, u64::MAX, ReadWriteFlags::NOWAIT) {
                // Not for this descriptor (a terminal, a file) or this kernel: wait.
                Err(Errno::OPNOTSUPP | Errno::INVAL | Errno::NOSYS) => self.nowait = false,
                written => return written.map_err(io::Error::from),
            }
        }
        let _ = wait;
        io::Write::write(&mut self.fd, rest)
    }

    fn fail(&mut self, e: io::Error) -> io::Result<bool> {
        self.failed = Some(e.kind());
        Err(e)
    }
}

/// Writes `line` (after what is queued) at once if no one else is writing to stdout and
/// nothing is waiting for the client to read; without waiting (a thread of the runtime).
pub(crate) fn try_put(out: &Mutex<StdOut>, line: String) -> Put {
    let Some(mut out) = try_lock(out) else {
        return Put::Busy(line);
    };
    if out.bytes.pending() {
        return Put::Busy(line);
    }
    if out.bytes.usable().is_err() {
        return Put::Failed;
    }
    out.take_queued();
    out.bytes.push(&line);
    match out.bytes.write(Wait::No) {
        Ok(true) => Put::Written,
        Ok(false) => {
            if let Some(forwarder) = out.forwarder.take() {
                forwarder.wake();
            }
            Put::Written
        }
        Err(e) => {
            tracing::debug!("stdout closed: {e}");
            Put::Failed
        }
    }
}

/// Waits until something is written: the rest of the buffer, or the next queued line (see
/// [`StdOut::poll_forward`]). Cancel-safe: what is taken from the queue is in the buffer.
pub(super) async fn forward(out: &Mutex<StdOut>) -> io::Result<()> {
    locked(out, StdOut::poll_forward).await
}

/// Writes what is queued and the whole buffer, as stdout gets room.
pub(super) async fn finish(out: &Mutex<StdOut>) -> io::Result<()> {
    locked(out, StdOut::poll_finish).await
}

/// Polls `step` under stdout's lock, taken without waiting for it ([`try_lock`]): while
/// someone else holds it, waits a while ([`Backoff`]) and tries again.
async fn locked<T>(
    out: &Mutex<StdOut>,
    mut step: impl FnMut(&mut StdOut, &mut Context<'_>) -> Poll<T>,
) -> T {
    let mut busy = Backoff::default();
    loop {
        let stepped = std::future::poll_fn(|cx| match try_lock(out) {
            Some(mut out) => step(&mut out, cx).map(Some),
            None => Poll::Ready(None),
        })
        .await;
        match stepped {
            Some(done) => return done,
            None => busy.wait().await,
        }
    }
}

/// The reading thread's lock: it may wait (it is not a thread of the runtime).
pub(super) fn lock(out: &Mutex<StdOut>) -> MutexGuard<'_, StdOut> {
    out.lock().unwrap_or_else(|e| e.into_inner())
}

/// stdout's lock if it is free (a poisoned lock is taken as it is). A thread of the
/// runtime never waits for it: the reading thread holds it for as long as its write
/// takes, which is for good when the client stops reading, and a thread blocked on it
/// could not see a signal, nor the drain's deadline.
fn try_lock(out: &Mutex<StdOut>) -> Option<MutexGuard<'_, StdOut>> {
    match out.try_lock() {
        Ok(out) => Some(out),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Waiting for stdout's lock: a writer usually holds it for the microseconds a line takes,
/// so the first tries only yield; then waits of 1 ms doubling to 64 ms, for a writer
/// blocked on a client that does not read.
#[derive(Default)]
struct Backoff(u32);

impl Backoff {
    async fn wait(&mut self) {
        match self.0.checked_sub(3) {
            None => tokio::task::yield_now().await,
            Some(n) => tokio::time::sleep(Duration::from_millis(1 << n.min(6))).await,
        }
        self.0 = self.0.saturating_add(1);
    }
}

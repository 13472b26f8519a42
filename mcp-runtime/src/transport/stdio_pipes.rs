//! The process's stdin and stdout as async streams, without tokio's blocking pool.
//!
//! `tokio::io::stdin()`/`stdout()` hand every read and every write to a blocking-pool
//! thread and back: two thread wake-ups per operation, most of what a stdio round trip
//! cost (profiled with `perf`: over 80% of the server's time in futex wake/park). Here
//! stdin, when it is a pipe (what a client that launches the server gives it), is read
//! non-blocking in place, woken by the runtime's own epoll; otherwise (a file, a
//! terminal, a socket) one thread of our own reads it in chunks. stdout is written
//! directly: a write to a pipe returns at once unless the client stops reading, and then
//! the one peer a stdio server has is not listening anyway.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// stdin as the runtime can best read it: in place when it is a pipe, by a thread of
/// ours otherwise.
pub(super) enum Stdin {
    #[cfg(target_os = "linux")]
    Polled(PolledStdin),
    Thread(ThreadStdin),
}

impl Stdin {
    pub(super) fn open() -> io::Result<Stdin> {
        #[cfg(target_os = "linux")]
        if let Some(p) = PolledStdin::open() {
            return Ok(Stdin::Polled(p));
        }
        ThreadStdin::spawn().map(Stdin::Thread)
    }
}

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Stdin::Polled(p) => p.poll_read(cx, buf),
            Stdin::Thread(t) => Pin::new(t).poll_read(cx, buf),
        }
    }
}

/// stdin, a pipe, read non-blocking through the runtime (a duplicate of fd 0, which
/// shares its flags); the flags are put back when it is dropped.
#[cfg(target_os = "linux")]
pub(super) struct PolledStdin {
    pipe: tokio::net::unix::pipe::Receiver,
    flags: rustix::fs::OFlags,
}

#[cfg(target_os = "linux")]
impl PolledStdin {
    fn open() -> Option<PolledStdin> {
        use std::os::fd::AsFd;
        let stdin = io::stdin();
        let fd = stdin.as_fd();
        if rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(fd).ok()?.st_mode)
            != rustix::fs::FileType::Fifo
        {
            return None;
        }
        let flags = rustix::fs::fcntl_getfl(fd).ok()?;
        let dup = fd.try_clone_to_owned().ok()?;
        // Sets O_NONBLOCK on the shared description, and registers it.
        match tokio::net::unix::pipe::Receiver::from_owned_fd(dup) {
            Ok(pipe) => Some(PolledStdin { pipe, flags }),
            Err(_) => {
                let _ = rustix::fs::fcntl_setfl(fd, flags);
                None
            }
        }
    }

    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_read(cx, buf)
    }
}

#[cfg(target_os = "linux")]
impl Drop for PolledStdin {
    fn drop(&mut self) {
        use std::os::fd::AsFd;
        let _ = rustix::fs::fcntl_setfl(io::stdin().as_fd(), self.flags);
    }
}

/// Chunks of stdin, read by a thread of ours; an empty chunk is the end of input.
pub(super) struct ThreadStdin {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    done: bool,
}

impl ThreadStdin {
    pub(super) fn spawn() -> io::Result<Self> {
        let (tx, rx) = mpsc::channel(4);
        std::thread::Builder::new()
            .name("mcp-stdin".into())
            .spawn(move || {
                let mut stdin = io::stdin().lock();
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let chunk = match stdin.read(&mut buf) {
                        Ok(n) => Ok(buf[..n].to_vec()),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let last = !matches!(&chunk, Ok(c) if !c.is_empty());
                    if tx.blocking_send(chunk).is_err() || last {
                        return;
                    }
                }
            })?;
        Ok(ThreadStdin {
            rx,
            chunk: Vec::new(),
            at: 0,
            done: false,
        })
    }
}

impl AsyncRead for ThreadStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at >= this.chunk.len() {
            if this.done {
                return Poll::Ready(Ok(()));
            }
            match this.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(c))) if !c.is_empty() => {
                    this.chunk = c;
                    this.at = 0;
                }
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Err(e));
                }
                // End of input (or the thread is gone).
                Poll::Ready(_) => {
                    this.done = true;
                    return Poll::Ready(Ok(()));
                }
            }
        }
        let n = buf.remaining().min(this.chunk.len() - this.at);
        buf.put_slice(&this.chunk[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// stdout, written in place.
pub(super) struct DirectStdout(io::Stdout);

impl DirectStdout {
    pub(super) fn new() -> Self {
        DirectStdout(io::stdout())
    }
}

impl AsyncWrite for DirectStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.0.lock().write(buf))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.lock().flush())
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.lock().flush())
    }
}

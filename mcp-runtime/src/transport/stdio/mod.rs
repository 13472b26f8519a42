//! stdio: one JSON-RPC message per line on stdin/stdout; logs go to stderr.
//!
//! [`Server::serve_stdio`] reads stdin on a thread of its own, with plain blocking reads,
//! and answers there what completes in its first poll, writing it to stdout itself: a
//! round trip costs what a bare line loop's does (a read and a write), with no poller, no
//! task and no worker to wake. What does not complete at once runs as a task of the
//! runtime, which writes its answer itself when no one else is writing, and queues it
//! otherwise (as it queues its notifications); a forwarder writes what is queued.
//! [`Server::serve_io`] serves any async byte stream the same way from one task.

mod dispatch;
mod forward;
pub(crate) mod lines;
mod sections;
mod stdout;

#[cfg(feature = "fuzzing")]
pub(crate) use lines::fuzz_lines;

use crate::server::Server;
use dispatch::Dispatch;
use forward::{Forwarder, Start, Unstarted};
use lines::{BlockingLines, Line, Lines};
pub(crate) use sections::Section;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use stdout::StdOut;
use stdout::{Put, try_put};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest accepted line (4 MiB). A longer line is discarded up to its newline and answered
/// with `-32700`; the stream stays in sync.
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// How long in-flight requests may finish after stdin closes.
pub const EOF_DRAIN: Duration = Duration::from_secs(5);

/// How many lines spawned requests may queue before they wait for stdout.
const QUEUE: usize = 1024;

impl Server {
    /// Serves on stdin/stdout until stdin closes or the process gets SIGINT/SIGTERM.
    ///
    /// stdin is read by a thread of its own (`mcp-stdio`), which also makes the first
    /// poll of each request, inside the runtime (`Handle::block_on`: its context and a
    /// task's cooperative budget, as on a worker); what is still pending then runs as a
    /// task. So until a handler first waits, it is in no task: `tokio::task::try_id()` is
    /// `None` there, and `tokio::task::id()` would panic. A panic on that thread is
    /// passed on to the caller, as a panic of the serving task was. After SIGINT/SIGTERM
    /// the thread may stay blocked in a read of stdin (a descriptor of its own, not
    /// `std::io::stdin`'s lock) until the process exits; it serves nothing more.
    ///
    /// When it stops (stdin closed, SIGINT/SIGTERM, or stdout closed), requests in flight
    /// get 5 s to finish (`EOF_DRAIN`), then are cancelled. If a blocking section one of
    /// its requests started ([`blocking`](crate::blocking), a plain `fn` tool,
    /// `SafePath::read_under`; a task's handler too, when the request made a task) is still
    /// running then, the process exits (status 0) here instead of returning: nothing can
    /// stop such a section, and the runtime would wait for it when dropped, keeping the
    /// process alive after its client. Blocking work started elsewhere (by the
    /// application, by HTTP requests, on a task a handler spawns itself) does not end the
    /// process: it returns, and what follows it runs.
    ///
    /// Logs go wherever the application's `tracing` subscriber sends them; never to stdout
    /// if you use [`telemetry::init`](crate::telemetry::init), which writes to stderr.
    pub async fn serve_stdio(self) -> io::Result<()> {
        self.stdio().await
    }

    /// `serve_stdio`'s body, boxed: an `async fn`'s body is compiled in every crate (and
    /// codegen unit) that polls it, so unboxed, the application's crate would get its own
    /// copy of all of it (the forwarder's task, the signal waits, the wind-down), beside
    /// this crate's. Boxed here, it exists once, and the caller polls it through a vtable.
    fn stdio(self) -> Pin<Box<dyn Future<Output = io::Result<()>> + Send>> {
        Box::pin(self.stdio_unboxed())
    }

    async fn stdio_unboxed(self) -> io::Result<()> {
        tracing::info!(server = %self.info().name, "serving MCP on stdio");
        self.inner.start_background();
        let (tx, rx) = mpsc::channel::<String>(QUEUE);
        let out = Arc::new(Mutex::new(StdOut::new(rx)?));
        let dispatch = Arc::new(Dispatch::new(self, tx, Some(Arc::clone(&out))));
        let stop = Arc::new(AtomicBool::new(false));
        // The reading thread's end: `Some` carries its panic.
        let (done_tx, done) = tokio::sync::oneshot::channel::<Option<Panic>>();
        let input = stdin()?;
        {
            let runtime = tokio::runtime::Handle::current();
            let (out, dispatch, stop) =
                (Arc::clone(&out), Arc::clone(&dispatch), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("mcp-stdio".into())
                .spawn(move || {
                    let ended = read_lines(&runtime, input, &dispatch, &out, &stop);
                    let _ = done_tx.send(ended);
                })?;
        }
        let mut waiting = Unstarted(Some(Forwarder {
            out,
            dispatch,
            stop,
            done,
            shutdown: Box::pin(crate::transport::shutdown_signal()),
        }));
        // Until the first line is queued (or the end comes), this thread waits, and a
        // server whose requests all answer in their first poll or write their answers
        // themselves (`try_put`) runs nothing on the runtime's workers: a worker's first
        // task costs pages of code and data of its own. This thread writes that first
        // line; the forwarder then runs as a task, so a stdout that blocks (a client that
        // stops reading) blocks a worker, not this thread (and whatever the application
        // joined with it).
        let start = match waiting.0.as_mut() {
            Some(f) => f.next().await,
            None => Start::Running,
        };
        let Some(forwarder) = waiting.0.take() else {
            return Ok(());
        };
        match tokio::spawn(forwarder.run(start)).await {
            Ok(None) => Ok(()),
            Ok(Some(panic)) => std::panic::resume_unwind(panic),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(io::Error::other(e)),
        }
    }

    /// Serves newline-delimited JSON-RPC over any byte stream (a pipe, a socket), until
    /// the reader ends or `shutdown` completes. Requests run concurrently; on the end of
    /// input, in-flight requests get 5 seconds to finish.
    pub async fn serve_io<R, W>(
        self,
        reader: R,
        writer: W,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        // One compiled serving loop whatever the stream types (the few virtual calls per
        // buffer cost nothing next to a read), instead of a copy per caller's types.
        self.serve_streams(Box::new(reader), Box::new(writer), Box::pin(shutdown))
            .await
    }

    /// The serving loop, boxed: polled through one vtable, so its code exists once, not
    /// in every codegen unit that awaits it.
    fn serve_streams<'a>(
        self,
        reader: Box<dyn AsyncRead + Unpin + Send + 'a>,
        writer: Box<dyn AsyncWrite + Unpin + Send>,
        shutdown: Pin<Box<dyn Future<Output = ()> + Send + 'a>>,
    ) -> Pin<Box<dyn Future<Output = io::Result<()>> + Send + 'a>> {
        Box::pin(self.serve_loop(reader, writer, shutdown))
    }

    async fn serve_loop(
        self,
        reader: Box<dyn AsyncRead + Unpin + Send + '_>,
        writer: Box<dyn AsyncWrite + Unpin + Send>,
        shutdown: Pin<Box<dyn Future<Output = ()> + Send + '_>>,
    ) -> io::Result<()> {
        self.inner.start_background();
        let (tx, rx) = mpsc::channel::<String>(QUEUE);
        let mut out = Out {
            w: tokio::io::BufWriter::new(writer),
            queue: rx,
        };
        let mut lines = Lines::new(BufReader::with_capacity(64 * 1024, reader), MAX_LINE);
        let dispatch = Dispatch::new(self, tx, None);
        let mut shutdown = Shutdown {
            signal: shutdown,
            came: false,
        };
        loop {
            let line = tokio::select! {
                biased;
                () = &mut shutdown.signal => break,
                Some(queued) = out.queue.recv() => {
                    match shutdown.unless_stuck(out.forward(queued)).await {
                        Some(Ok(())) if !shutdown.came => continue,
                        Some(Ok(())) => break,
                        Some(Err(e)) => {
                            tracing::debug!("stdout closed: {e}");
                            break;
                        }
                        None => return stuck(&dispatch).await,
                    }
                }
                line = lines.next() => line,
            };
            let line = match line {
                Ok(Line::Eof) => break,
                Ok(line) => line,
                Err(e) => {
                    tracing::warn!("stdin read failed: {e}");
                    break;
                }
            };
            if let Some(answer) = dispatch.line(line) {
                match shutdown.unless_stuck(out.put(&answer)).await {
                    Some(Ok(())) if !shutdown.came => {}
                    Some(_) => break,
                    None => return stuck(&dispatch).await,
                }
            }
        }
        wind_down(&dispatch, &mut Sink::Async(&mut out)).await;
        Ok(())
    }
}

/// `serve_io`'s shutdown future, and whether it has come (it is not polled again then).
struct Shutdown<'a> {
    signal: Pin<Box<dyn Future<Output = ()> + Send + 'a>>,
    came: bool,
}

impl Shutdown<'_> {
    /// Awaits a write to the peer. Should the shutdown come while the peer is not reading,
    /// the write is given the drain's time ([`EOF_DRAIN`]) to end, as the wind-down's
    /// writes are: `None` if it did not, and the write is dropped half done (nothing more
    /// can go out whole after it). A write is never cut short before the shutdown, so a
    /// slow reader gets whole lines.
    async fn unless_stuck(
        &mut self,
        write: impl Future<Output = io::Result<()>>,
    ) -> Option<io::Result<()>> {
        tokio::pin!(write);
        if !self.came {
            tokio::select! {
                biased;
                written = &mut write => return Some(written),
                () = &mut self.signal => self.came = true,
            }
        }
        tokio::time::timeout(EOF_DRAIN, write).await.ok()
    }
}

/// The end of a `serve_io` whose peer stopped reading while the server was asked to stop:
/// nothing in flight can be answered, so it is cancelled, and nothing more is written.
async fn stuck(dispatch: &Dispatch) -> io::Result<()> {
    tracing::warn!("the peer is not reading; ending without writing the rest");
    dispatch.end_input();
    dispatch.cancel_all().await;
    Ok(())
}

type Panic = Box<dyn std::any::Any + Send>;

/// stdin for the reading thread: a duplicate of the descriptor where there are
/// descriptors (so `std::io::stdin` stays usable by the application), buffered. The
/// descriptor is taken as it is, not through `std::io::stdin()`, which would allocate
/// its own buffer (8 KiB, for the process's life) that this never reads through.
fn stdin() -> io::Result<Box<dyn io::BufRead + Send>> {
    #[cfg(unix)]
    {
        let fd = rustix::stdio::stdin().try_clone_to_owned()?;
        Ok(Box::new(io::BufReader::with_capacity(
            64 * 1024,
            std::fs::File::from(fd),
        )))
    }
    #[cfg(not(unix))]
    {
        Ok(Box::new(io::stdin().lock()))
    }
}

/// The reading thread: a line at a time until the end of input, a read error, a closed
/// stdout or `stop`. Each line is handled inside `Handle::block_on`, so a handler's first
/// poll has the runtime's context and a task's cooperative budget, as on a worker (a
/// handler that yields only through that budget is spawned like any other). Returns the
/// panic to pass on, if handling a line panicked.
fn read_lines(
    runtime: &tokio::runtime::Handle,
    input: Box<dyn io::BufRead + Send>,
    dispatch: &Dispatch,
    out: &Mutex<StdOut>,
    stop: &AtomicBool,
) -> Option<Panic> {
    let mut lines = BlockingLines::new(input, MAX_LINE);
    loop {
        let line = match lines.next() {
            Ok(Line::Eof) => return None,
            Ok(line) => line,
            // A non-blocking stdin (the flag belongs to the description, which the
            // process may share with its parent): wait until it has something.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait_for(Stdio::In);
                continue;
            }
            Err(e) => {
                tracing::warn!("stdin read failed: {e}");
                return None;
            }
        };
        if stop.load(Ordering::Acquire) {
            return None;
        }
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime.block_on(async { dispatch.line(line) })
        }));
        let answer = match handled {
            Ok(answer) => answer,
            Err(panic) => return Some(panic),
        };
        if let Some(answer) = answer
            && let Err(e) = stdout::lock(out).put(&answer)
        {
            tracing::debug!("stdout closed: {e}");
            return None;
        }
    }
}

/// Which standard stream to wait for.
#[derive(Clone, Copy)]
enum Stdio {
    /// stdin, until it has input (or its writer is gone).
    In,
    /// stdout, until it has room (or its reader is gone).
    Out,
}

/// Waits until `which` is ready, with `poll(2)` (elsewhere, a millisecond's sleep).
fn wait_for(which: Stdio) {
    #[cfg(target_os = "linux")]
    {
        use rustix::event::{PollFd, PollFlags, poll};
        let (fd, flags) = match which {
            Stdio::In => (rustix::stdio::stdin(), PollFlags::IN),
            Stdio::Out => (rustix::stdio::stdout(), PollFlags::OUT),
        };
        let mut fds = [PollFd::new(&fd, flags)];
        if poll(&mut fds, None).is_ok() {
            return;
        }
    }
    let _ = which;
    std::thread::sleep(Duration::from_millis(1));
}

/// The end of a connection: subscriptions end with their result; in-flight requests get
/// [`EOF_DRAIN`] to finish, their queued lines written as they come; then the rest of the
/// queue, and a flush, for at most [`FLUSH_GRACE`].
///
/// A line being written is never given up half way for a request that finishes: the rest
/// of it would be lost and the next line would follow the broken one on the same line. At
/// the deadline, though, a write still waiting for the client to read is given up, and
/// nothing more is written: a client that stopped reading must not keep the server alive
/// (a signal to stop would wait for it forever).
async fn wind_down(dispatch: &Dispatch, out: &mut Sink<'_>) {
    dispatch.end_input();
    let deadline = tokio::time::sleep(EOF_DRAIN);
    tokio::pin!(deadline);
    loop {
        let next = tokio::select! {
            biased;
            () = &mut deadline => {
                tracing::warn!("in-flight requests did not finish in {EOF_DRAIN:?}; cancelling them");
                dispatch.cancel_all().await;
                break;
            }
            next = out.next() => next,
            more = dispatch.join_next() => match more {
                true => continue,
                false => break,
            },
        };
        let written = tokio::select! {
            biased;
            written = out.write(next) => written,
            () = &mut deadline => {
                tracing::warn!("stdout is not being read; ending without writing the rest");
                dispatch.cancel_all().await;
                return;
            }
        };
        if written.is_err() {
            // The reader of stdout is gone: nothing still in flight can be answered.
            dispatch.cancel_all().await;
            return;
        }
    }
    // The reader of stdout may be gone (EPIPE): that ends the session quietly.
    if tokio::time::timeout(FLUSH_GRACE, out.finish())
        .await
        .is_err()
    {
        tracing::warn!("stdout is not being read; ending without writing the rest");
    }
}

/// How long the last queued lines may take to reach the client once in-flight requests
/// are over (or cancelled).
const FLUSH_GRACE: Duration = Duration::from_secs(1);

/// Where a connection's lines go: an async writer polled by the serving task, or stdout
/// shared by the reading thread, the forwarder and the tasks writing their answers.
enum Sink<'a> {
    Async(&'a mut Out),
    Shared(&'a Mutex<StdOut>),
}

/// What [`Sink::next`] got: a line to write, or (stdout) the outcome of writing it.
enum Next {
    Line(String),
    Written(io::Result<()>),
}

impl Sink<'_> {
    /// Waits for a queued line. Cancel-safe: an async writer's line is taken from the
    /// queue and handed to [`Sink::write`]; stdout's is written in the same poll that takes
    /// it, under the lock the reading thread writes under (see [`forward_shared`]).
    async fn next(&mut self) -> Next {
        match self {
            Sink::Async(out) => match out.queue.recv().await {
                Some(first) => Next::Line(first),
                None => std::future::pending().await,
            },
            Sink::Shared(out) => Next::Written(stdout::forward(out).await),
        }
    }

    /// Writes what [`Sink::next`] got and whatever else is queued, to the end.
    async fn write(&mut self, next: Next) -> io::Result<()> {
        match (self, next) {
            (Sink::Async(out), Next::Line(first)) => out.forward(first).await,
            (_, Next::Written(written)) => written,
            // stdout's lines are written as `next` takes them.
            (Sink::Shared(_), Next::Line(_)) => Ok(()),
        }
    }

    /// Writes what is still queued, and flushes.
    async fn finish(&mut self) -> io::Result<()> {
        match self {
            Sink::Async(out) => {
                while let Ok(queued) = out.queue.try_recv() {
                    out.line(&queued).await?;
                }
                out.w.flush().await
            }
            Sink::Shared(out) => stdout::finish(out).await,
        }
    }
}

/// What goes to an async writer: the serving loop writes a reply it has at once itself
/// (after whatever is queued, so a request's notifications still come before its
/// answer), and what other tasks send through the queue when it wakes for it.
struct Out {
    w: tokio::io::BufWriter<Box<dyn AsyncWrite + Unpin + Send>>,
    queue: mpsc::Receiver<String>,
}

impl Out {
    /// Writes what is queued, then `line`, and flushes. `Err`: the writer is closed.
    async fn put(&mut self, line: &str) -> io::Result<()> {
        while let Ok(queued) = self.queue.try_recv() {
            self.line(&queued).await?;
        }
        self.line(line).await?;
        self.w.flush().await
    }

    /// Writes `first` (taken from the queue) and whatever else is queued, and flushes.
    async fn forward(&mut self, first: String) -> io::Result<()> {
        self.line(&first).await?;
        while let Ok(queued) = self.queue.try_recv() {
            self.line(&queued).await?;
        }
        self.w.flush().await
    }

    async fn line(&mut self, line: &str) -> io::Result<()> {
        self.w.write_all(line.as_bytes()).await?;
        self.w.write_all(b"\n").await
    }
}

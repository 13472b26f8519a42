//! stdio: one JSON-RPC message per line on stdin/stdout; logs go to stderr.

use crate::protocol::{RequestId, RpcError, json::parse_strict, methods};
use crate::server::Server;
use crate::server::parts::{NoGuard, Streams};
use crate::server::reply::{ErrorClass, Rejection, Reply};
use crate::server::route::Prepared;
use crate::server::session::Session;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

/// Longest accepted line (4 MiB). A longer line is discarded up to its newline and answered
/// with `-32700`; the stream stays in sync.
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// How long in-flight requests may finish after stdin closes.
pub const EOF_DRAIN: Duration = Duration::from_secs(5);

enum Line {
    Message(Vec<u8>),
    TooLong,
    Eof,
}

/// Lines of at most `max` bytes (newline excluded) from a buffered reader. On overflow,
/// the rest of the line is skipped to its newline without being buffered. Cancel-safe: a
/// partial line stays here for the next call, so it can wait in a `select!`.
struct Lines<R> {
    reader: R,
    max: usize,
    buf: Vec<u8>,
    overflow: bool,
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    fn new(reader: R, max: usize) -> Self {
        Lines {
            reader,
            max,
            buf: Vec::new(),
            overflow: false,
        }
    }

    async fn next(&mut self) -> io::Result<Line> {
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                // EOF: a partial last line is still a message.
                return Ok(if std::mem::take(&mut self.overflow) {
                    Line::TooLong
                } else if self.buf.is_empty() {
                    Line::Eof
                } else {
                    Line::Message(std::mem::take(&mut self.buf))
                });
            }
            let (take, done) = match memchr(chunk) {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            if !self.overflow {
                if self.buf.len() + take > self.max {
                    self.overflow = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(&chunk[..take]);
                }
            }
            self.reader.consume(if done { take + 1 } else { take });
            if done {
                return Ok(if std::mem::take(&mut self.overflow) {
                    Line::TooLong
                } else {
                    Line::Message(std::mem::take(&mut self.buf))
                });
            }
        }
    }
}

/// What goes to stdout: the serving loop writes a reply it has at once itself (after
/// whatever is queued, so a request's notifications still come before its answer), and
/// what other tasks send through the queue when it wakes for it. No writer task: the
/// common round trip wakes nothing but the loop.
struct Out<W: AsyncWrite + Unpin> {
    w: tokio::io::BufWriter<W>,
    queue: mpsc::Receiver<String>,
}

impl<W: AsyncWrite + Unpin> Out<W> {
    /// Writes what is queued, then `line`, and flushes. `Err`: stdout is closed.
    async fn put(&mut self, line: String) -> io::Result<()> {
        while let Ok(queued) = self.queue.try_recv() {
            self.line(&queued).await?;
        }
        self.line(&line).await?;
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

/// The line reader over `bytes` (a 64-byte limit, an 8-byte buffer), for the fuzz target.
#[cfg(feature = "fuzzing")]
pub(crate) async fn fuzz_lines(bytes: &[u8]) -> u64 {
    let mut r = Lines::new(BufReader::with_capacity(8, bytes), 64);
    // The outcome: how many messages and over-long lines, in small classes.
    let (mut messages, mut long) = (0u64, 0u64);
    loop {
        match r.next().await {
            Ok(Line::Eof) => return (messages.min(8) << 4) | long.min(8),
            Err(_) => return 1 << 8,
            Ok(Line::Message(m)) => {
                assert!(m.len() <= 64, "a line past the limit");
                messages += 1;
            }
            Ok(Line::TooLong) => long += 1,
        }
    }
}

fn memchr(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

impl Server {
    /// Serves on stdin/stdout until stdin closes or the process gets SIGINT/SIGTERM.
    ///
    /// Logs go wherever the application's `tracing` subscriber sends them; never to stdout
    /// if you use [`telemetry::init`](crate::telemetry::init), which writes to stderr.
    pub async fn serve_stdio(self) -> io::Result<()> {
        tracing::info!(server = %self.info().name, "serving MCP on stdio");
        let serving = self.serve_streams(
            Box::new(super::stdio_pipes::Stdin::open()?),
            Box::new(super::stdio_pipes::DirectStdout::new()),
            Box::pin(crate::transport::shutdown_signal()),
        );
        // On a worker of the runtime, not on the thread that called `block_on`: the worker
        // that sees stdin readable then runs the loop itself, instead of waking that
        // thread for every message (two context switches per round trip).
        match tokio::spawn(serving).await {
            Ok(served) => served,
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
        let (tx, rx) = mpsc::channel::<String>(1024);
        let mut out = Out {
            w: tokio::io::BufWriter::new(writer),
            queue: rx,
        };
        let mut lines = Lines::new(BufReader::with_capacity(64 * 1024, reader), MAX_LINE);
        let in_flight: Arc<Mutex<HashMap<RequestId, AbortHandle>>> = Arc::default();
        let mut tasks = JoinSet::new();
        let end_of_input = tokio_util::sync::CancellationToken::new();
        let mut session: Option<Arc<Session>> = None;
        tokio::pin!(shutdown);

        loop {
            let line = tokio::select! {
                biased;
                () = &mut shutdown => break,
                Some(queued) = out.queue.recv() => {
                    if let Err(e) = out.forward(queued).await {
                        tracing::debug!("stdout closed: {e}");
                        break;
                    }
                    continue;
                }
                line = lines.next() => line,
            };
            // Reap finished tasks so the set does not grow.
            while tasks.try_join_next().is_some() {}
            let bytes = match line {
                Ok(Line::Message(b)) => b,
                Ok(Line::TooLong) => {
                    let e = RpcError::parse_error(format!("line longer than {MAX_LINE} bytes"));
                    if out.put(parse_error(e)).await.is_err() {
                        break;
                    }
                    continue;
                }
                Ok(Line::Eof) => break,
                Err(e) => {
                    tracing::warn!("stdin read failed: {e}");
                    break;
                }
            };
            let trimmed = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
            if trimmed.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let msg = match parse_strict(trimmed) {
                Ok(v) => v,
                Err(e) => {
                    if out
                        .put(parse_error(RpcError::parse_error(e)))
                        .await
                        .is_err()
                    {
                        break;
                    }
                    continue;
                }
            };
            // The legacy era: `initialize` opens the process's one session; later messages
            // without per-request `_meta` belong to it. Modern requests are served
            // statelessly all along.
            if self.opens_session(&msg) && session.is_none() {
                let (opened, reply) = self.initialize(msg, "stdio".into());
                if let Some(s) = opened {
                    s.set_outbound(Some(tx.clone()));
                    s.forward_changes(&self.inner);
                    session = Some(s);
                }
                if out.put(reply.body).await.is_err() {
                    break;
                }
                continue;
            }
            let legacy = session.as_ref().filter(|_| !is_modern(&msg));
            if let (Some(s), Value::Array(batch)) = (legacy, &msg) {
                // 2025-03-26 allows JSON-RPC batches; later revisions do not.
                let s = Arc::clone(s);
                let batch = batch.clone();
                let server = self.clone();
                let tx = tx.clone();
                tasks.spawn(async move {
                    if let Some(line) = server
                        .run_batch(batch, &s, Streams::Shared(tx.clone()))
                        .await
                    {
                        let _ = tx.send(line).await;
                    }
                });
                continue;
            }
            let prepared = match legacy {
                Some(s) => self.prepare_legacy(msg, s, Streams::Shared(tx.clone())),
                None => self.prepare(msg, &NoGuard, Streams::Shared(tx.clone())),
            };
            match prepared {
                Prepared::Answer => {}
                Prepared::Reply(r) => {
                    if out.put(r.body).await.is_err() {
                        break;
                    }
                }
                Prepared::Notification { method, params } => {
                    if method == methods::NOTIFICATION_CANCELLED {
                        cancel(&in_flight, params.as_ref());
                    }
                }
                Prepared::Listen(mut listen) => {
                    // Several subscriptions can share the connection; each ends on
                    // `notifications/cancelled` naming it, or gracefully at the end of input.
                    listen.stop_with(end_of_input.clone());
                    listen.cancel_on_teardown();
                    let id = listen.id().clone();
                    let tx = tx.clone();
                    let map = Arc::clone(&in_flight);
                    let mut guard = in_flight.lock().unwrap_or_else(|e| e.into_inner());
                    let task_id = id.clone();
                    let handle = tasks.spawn(async move {
                        while let Some(msg) = listen.next().await {
                            if tx.send(msg).await.is_err() {
                                break;
                            }
                        }
                        map.lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(&task_id);
                    });
                    guard.insert(id, handle);
                }
                Prepared::Call(job) => {
                    let id = job.id().clone();
                    let refused = |r: Rejection| Reply::rejection(Some(&id), r).body;
                    // An id still in flight cannot name a second request: its cancel
                    // would be ambiguous.
                    let duplicate = in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .contains_key(&id);
                    if duplicate {
                        let r = Rejection::malformed("this request id is already in flight");
                        if out.put(refused(r)).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    let Some(slot) = self.inner.admit() else {
                        tracing::warn!("too many requests in flight");
                        let r = Rejection::new(
                            ErrorClass::Busy,
                            RpcError::internal("Too many requests in flight; try again later"),
                        );
                        if out.put(refused(r)).await.is_err() {
                            break;
                        }
                        continue;
                    };
                    // Most requests finish in their first poll: answer those here, with
                    // no task to spawn and no worker to wake (the stdio round trip's
                    // main cost). The others continue as tasks, cancellable.
                    let mut run = Box::pin(job.run());
                    if let std::task::Poll::Ready(reply) = futures_util::poll!(&mut run) {
                        drop(slot);
                        if out.put(reply.body).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    let tx = tx.clone();
                    let map = Arc::clone(&in_flight);
                    let mut guard = in_flight.lock().unwrap_or_else(|e| e.into_inner());
                    let task_id = id.clone();
                    let handle = tasks.spawn(async move {
                        let _slot = slot;
                        let reply = run.await;
                        // Once removed from the map, a late cancel is ignored and the
                        // reply is committed.
                        map.lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(&task_id);
                        let _ = tx.send(reply.body).await;
                    });
                    guard.insert(id, handle);
                }
            }
        }

        // End of input: subscriptions end with their result; in-flight requests finish;
        // then flush.
        end_of_input.cancel();
        if let Some(s) = &session {
            s.close();
        }
        // What the tasks still send is written as it comes.
        let drain = async {
            loop {
                tokio::select! {
                    biased;
                    Some(queued) = out.queue.recv() => {
                        if out.forward(queued).await.is_err() {
                            return;
                        }
                    }
                    done = tasks.join_next() => if done.is_none() { return },
                }
            }
        };
        if tokio::time::timeout(EOF_DRAIN, drain).await.is_err() {
            tracing::warn!("in-flight requests did not finish in {EOF_DRAIN:?}; cancelling them");
            tasks.shutdown().await;
        }
        drop(tx);
        while let Ok(queued) = out.queue.try_recv() {
            if out.line(&queued).await.is_err() {
                return Ok(());
            }
        }
        // The reader of stdout may be gone (EPIPE): that ends the session quietly.
        let _ = out.w.flush().await;
        Ok(())
    }
}

/// Whether a message carries per-request `_meta` (the modern era).
fn is_modern(msg: &Value) -> bool {
    msg.get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(crate::protocol::keys::PROTOCOL_VERSION))
        .is_some()
}

/// The answer to a line that is not a JSON message.
fn parse_error(e: RpcError) -> String {
    Reply::rejection(None, Rejection::new(ErrorClass::Malformed, e)).body
}

/// `notifications/cancelled {requestId}`: drop the request's future. Unknown, finished or
/// malformed cancels are ignored.
fn cancel(in_flight: &Mutex<HashMap<RequestId, AbortHandle>>, params: Option<&Value>) {
    let Some(id) = params
        .and_then(|p| p.get("requestId"))
        .and_then(RequestId::from_value)
    else {
        return;
    };
    if let Some(h) = in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id)
    {
        tracing::debug!(%id, "request cancelled by the client");
        h.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_line_read_cut_short_by_select_loses_nothing() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut r = Lines::new(BufReader::new(rx), 100);
        tx.write_all(b"abc").await.unwrap();
        let cut = tokio::time::timeout(Duration::from_millis(20), r.next()).await;
        assert!(cut.is_err(), "no whole line yet");
        tx.write_all(b"def\nnext\n").await.unwrap();
        let Line::Message(m) = r.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(m, b"abcdef");
        let Line::Message(m) = r.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(m, b"next");
    }

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_stream_resyncs() {
        let input = format!("{}\n{{\"a\":1}}\r\nlast", "x".repeat(100));
        let mut r = Lines::new(BufReader::with_capacity(8, input.as_bytes()), 50);
        assert!(matches!(r.next().await.unwrap(), Line::TooLong));
        let Line::Message(m) = r.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(m, b"{\"a\":1}\r");
        let Line::Message(m) = r.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(m, b"last");
        assert!(matches!(r.next().await.unwrap(), Line::Eof));
    }
}

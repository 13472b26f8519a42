//! What one connection may hold, and for how long: a deadline on silence while no request
//! is being served (first byte, idle keep-alive, slow header bytes), a deadline on a stalled
//! write (a client that stops reading its response), and response bodies that keep their
//! request counted until they are fully sent.

use crate::server::slot::Slot;
use axum::body::Body;
use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// A connection's byte stream with three deadlines: `idle` for silence while none of its
/// requests is being served, `head` for a request's header bytes from the first of them
/// to the start of the request (so a client trickling header bytes is cut off too), and
/// `stall` for a write that makes no progress. Each ends the connection (an I/O error
/// hyper turns into a close). hyper's own header timer is off: it allocates and registers
/// a timer per request, where these two (one for reads, one for writes) are allocated
/// once per connection and moved on.
pub(super) struct Deadlines<S> {
    inner: S,
    idle: Duration,
    head: Duration,
    stall: Duration,
    /// Requests of this connection being served (their responses not fully sent), and
    /// how many were ever started.
    busy: Arc<Busy>,
    /// While waiting for a request whose first bytes came: when its headers must be in,
    /// and for which request (the count of started ones when those bytes came).
    head_by: Option<(Instant, usize)>,
    /// The look at the head of the request waited for.
    scan: HeadScan,
    /// The earlier of the idle and the header deadline, while waiting for a request.
    read_timer: Timer,
    write_timer: Timer,
}

/// A deadline that is armed and disarmed many times over a connection's life (once per
/// request on a keep-alive connection): its `Sleep` is allocated once and moved on with
/// `reset`, which for a later deadline is a store, not a trip through the timer wheel's
/// lock. A disarmed timer may still fire once at its old deadline: a spurious wake-up of
/// the connection's task, after which nothing is armed again until it is needed.
#[derive(Default)]
struct Timer {
    sleep: Option<Pin<Box<Sleep>>>,
    /// What the connection is closed for when the armed deadline passes.
    armed: Option<&'static str>,
}

impl Timer {
    fn disarm(&mut self) {
        self.armed = None;
    }

    fn arm(&mut self, at: Instant, what: &'static str) {
        match &mut self.sleep {
            Some(s) => s.as_mut().reset(at),
            None => self.sleep = Some(Box::pin(tokio::time::sleep_until(at))),
        }
        self.armed = Some(what);
    }

    /// Polls the armed deadline: `Err` once it has passed.
    fn expired(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let (Some(sleep), Some(what)) = (&mut self.sleep, self.armed) else {
            return Ok(());
        };
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                tracing::debug!("closing a connection: {what}");
                Err(io::Error::new(io::ErrorKind::TimedOut, what))
            }
            Poll::Pending => Ok(()),
        }
    }
}

/// What a connection's requests tell its deadlines, and its reads tell its requests.
#[derive(Default)]
pub(super) struct Busy {
    /// Requests being served (their responses not fully sent).
    pub(super) serving: Arc<AtomicUsize>,
    /// Requests started on this connection.
    pub(super) started: AtomicUsize,
    /// The number (1 for the first) of the request whose header section carried both
    /// `Content-Length` and `Transfer-Encoding`; 0 for none.
    pub(super) framing_conflict: AtomicUsize,
}

/// A look at the header section of the request a connection waits for, as its bytes
/// arrive, for `Content-Length` together with `Transfer-Encoding` (S-3): hyper frames such
/// a request by the latter and drops the former, so the request itself no longer shows
/// it. Only bytes read while no request is being served are looked at (the head of the
/// next request; one pipelined behind a request being served goes unseen, and hyper's
/// close after it still keeps what follows from being read as a request).
#[derive(Default)]
struct HeadScan {
    /// The count of started requests when this head began: it is the next one's.
    after: usize,
    /// The current line's first bytes (enough for the names looked for).
    head: [u8; HeadScan::HEAD],
    /// Bytes of the current line seen.
    line_len: usize,
    /// Whether the request line was seen (it starts with a method, a token, and a space).
    request_line: bool,
    content_length: bool,
    transfer_encoding: bool,
    /// The header section ended (or is not one).
    done: bool,
}

impl HeadScan {
    /// Bytes kept of the start of a line: the longest name looked for and its colon.
    const HEAD: usize = 18;

    /// Looks at `bytes`, the next ones of the head; true once the section ended with
    /// both headers in it. Each line is looked at only at its start.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while !self.done && !bytes.is_empty() {
            let end = memchr::memchr(b'\n', bytes);
            let part = &bytes[..end.unwrap_or(bytes.len())];
            if self.line_len < Self::HEAD {
                let n = (Self::HEAD - self.line_len).min(part.len());
                self.head[self.line_len..self.line_len + n].copy_from_slice(&part[..n]);
            }
            self.line_len += part.len();
            let Some(end) = end else {
                return false;
            };
            bytes = &bytes[end + 1..];
            if self.line_ended() {
                return true;
            }
        }
        false
    }

    /// The current line ended: looks at it, then starts the next. True when it ended a
    /// section that had both headers.
    fn line_ended(&mut self) -> bool {
        let head = &self.head[..self.line_len.min(Self::HEAD)];
        let empty = head.is_empty() || head == b"\r";
        let mut conflict = false;
        if !self.request_line {
            // A method is a token (RFC 9110 5.6.2): hyper takes any, `M-SEARCH`, `post`.
            let tchar = |b: &&u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
            let method = head.iter().take_while(tchar).count();
            if empty {
                // Empty lines before the request line are allowed (RFC 9112 2.2).
            } else if method > 0 && head.get(method) == Some(&b' ') {
                self.request_line = true;
            } else {
                self.done = true;
            }
        } else if empty {
            self.done = true;
            conflict = self.content_length && self.transfer_encoding;
        } else {
            let name = |n: &[u8]| head.len() >= n.len() && head[..n.len()].eq_ignore_ascii_case(n);
            if name(b"content-length:") {
                self.content_length = true;
            } else if name(b"transfer-encoding:") {
                self.transfer_encoding = true;
            }
        }
        self.line_len = 0;
        conflict
    }
}

impl<S> Deadlines<S> {
    /// `head` counts from a request's first byte: the wait for a request may last up to
    /// `idle + head` (its first byte just before the idle deadline).
    pub(super) fn new(
        inner: S,
        idle: Duration,
        head: Duration,
        stall: Duration,
        busy: Arc<Busy>,
    ) -> Self {
        Deadlines {
            inner,
            idle,
            head,
            stall,
            busy,
            head_by: None,
            scan: HeadScan::default(),
            read_timer: Timer::default(),
            write_timer: Timer::default(),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Deadlines<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        // No request is being served: the connection waits for the next one.
        let waiting = this.busy.serving.load(Ordering::Acquire) == 0;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                // Bytes (or the end): the silence is over. The first bytes of a request
                // set its header deadline, which holds until the request is started
                // (`head_by` names the request it is for).
                this.read_timer.disarm();
                if waiting && r.is_ok() {
                    let started = this.busy.started.load(Ordering::Acquire);
                    let new_bytes = buf.filled().len() > before;
                    if new_bytes && !matches!(this.head_by, Some((_, n)) if n == started) {
                        this.head_by = Some((Instant::now() + this.head, started));
                    }
                    if this.scan.after != started {
                        this.scan = HeadScan {
                            after: started,
                            ..HeadScan::default()
                        };
                    }
                    if this.scan.feed(&buf.filled()[before..]) {
                        this.busy
                            .framing_conflict
                            .store(started + 1, Ordering::Release);
                    }
                }
                Poll::Ready(r)
            }
            Poll::Pending if waiting => {
                if this.read_timer.armed.is_none() {
                    let idle_by = Instant::now() + this.idle;
                    // A deadline set for an earlier request is not this one's; before
                    // this one's first byte there is only the idle deadline.
                    let started = this.busy.started.load(Ordering::Acquire);
                    match this.head_by {
                        Some((head_by, n)) if n == started && head_by <= idle_by => {
                            this.read_timer
                                .arm(head_by, "the request headers took too long");
                        }
                        _ => this.read_timer.arm(idle_by, "idle too long"),
                    }
                }
                this.read_timer.expired(cx)?;
                Poll::Pending
            }
            Poll::Pending => {
                // A request is being served: silence from the client is expected.
                this.read_timer.disarm();
                Poll::Pending
            }
        }
    }
}

impl<S> Deadlines<S> {
    /// A write-side poll's outcome under the stall deadline: progress resets it; a
    /// pending write arms it, and fails once it has fired.
    fn write_deadline<T>(
        &mut self,
        polled: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        match polled {
            Poll::Ready(r) => {
                self.write_timer.disarm();
                Poll::Ready(r)
            }
            Poll::Pending => {
                if self.write_timer.armed.is_none() {
                    self.write_timer
                        .arm(Instant::now() + self.stall, "the client stopped reading");
                }
                self.write_timer.expired(cx)?;
                Poll::Pending
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Deadlines<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.write_deadline(polled, cx)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.write_deadline(polled, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.write_deadline(polled, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// A response body that holds `guard` until it is fully sent (or dropped): the request
/// stays counted while its response streams.
pub(super) fn holding(body: Body, guard: Slot) -> Body {
    struct Holding {
        body: Body,
        _guard: Slot,
    }
    impl HttpBody for Holding {
        type Data = Bytes;
        type Error = axum::Error;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
            let frame = ready!(Pin::new(&mut self.body).poll_frame(cx));
            Poll::Ready(frame)
        }
        fn is_end_stream(&self) -> bool {
            self.body.is_end_stream()
        }
        fn size_hint(&self) -> SizeHint {
            self.body.size_hint()
        }
    }
    Body::new(Holding {
        body,
        _guard: guard,
    })
}

/// The head look over `bytes` fed whole and fed in two parts split at every point, for
/// the fuzz target: the verdict must not depend on how the bytes arrive. The outcome:
/// whether a section with both headers was seen, and where the look stopped.
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_head(bytes: &[u8]) -> u64 {
    let whole = {
        let mut scan = HeadScan::default();
        scan.feed(bytes)
    };
    // Every split of the first 512 bytes (the rest as one part), and byte by byte.
    for at in 0..bytes.len().min(512) {
        let mut scan = HeadScan::default();
        let split = scan.feed(&bytes[..at]) || scan.feed(&bytes[at..]);
        assert_eq!(split, whole, "split at {at} changed the verdict");
    }
    let mut scan = HeadScan::default();
    let bytewise = bytes.chunks(1).any(|b| scan.feed(b));
    assert_eq!(bytewise, whole, "fed byte by byte, the verdict changed");
    u64::from(whole)
        | u64::from(scan.request_line) << 1
        | u64::from(scan.content_length) << 2
        | u64::from(scan.transfer_encoding) << 3
        | u64::from(scan.done) << 4
}

#[cfg(test)]
mod tests {
    use super::HeadScan;

    fn conflict(chunks: &[&str]) -> bool {
        let mut scan = HeadScan::default();
        chunks.iter().any(|c| scan.feed(c.as_bytes()))
    }

    #[test]
    fn a_head_with_both_lengths_is_seen_in_any_split() {
        let head = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nbody";
        assert!(conflict(&[head]));
        for at in 1..head.len() {
            assert!(conflict(&[&head[..at], &head[at..]]), "split at {at}");
        }
        assert!(conflict(&[
            "\r\nPOST / HTTP/1.1\r\ntransfer-encoding: chunked\r\nCONTENT-LENGTH: 1\r\n\r\n"
        ]));
        // Bare LF line ends, a long request line, long header lines.
        assert!(conflict(&[
            "POST /mcp HTTP/1.1\nContent-Length: 5\nTransfer-Encoding: chunked\n\n"
        ]));
        let long = format!(
            "POST /{} HTTP/1.1\r\nX-Long: {}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "a".repeat(5000),
            "b".repeat(5000)
        );
        for at in [1, 17, 5003, 5010, 5020, 10030] {
            assert!(conflict(&[&long[..at], &long[at..]]), "split at {at}");
        }
        // Any method token.
        for method in ["M-SEARCH", "post", "X_FOO"] {
            let head = format!(
                "{method} /mcp HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
            );
            assert!(conflict(&[&head]), "{method}");
        }
        // One of them, or neither.
        assert!(!conflict(&["POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"]));
        assert!(!conflict(&[
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        ]));
        // Not a header: a value that names it, a body after the head, a body alone.
        assert!(!conflict(&[
            "POST / HTTP/1.1\r\nX-A: content-length:\r\nTransfer-Encoding: chunked\r\n\r\nContent-Length: 1\r\n\r\n"
        ]));
        assert!(!conflict(&[
            "{\"a\":1}\nContent-Length: 1\nTransfer-Encoding: chunked\n\n"
        ]));
    }
}

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
/// requests is being served, `head` for the whole wait for the next request (idle time
/// plus its header bytes, so a client trickling header bytes is cut off too), and `stall`
/// for a write that makes no progress. Each ends the connection (an I/O error hyper turns
/// into a close). hyper's own header timer is off: it allocates and registers a timer per
/// request, where these two (one for reads, one for writes) are allocated once per
/// connection and moved on.
pub(super) struct Deadlines<S> {
    inner: S,
    idle: Duration,
    head: Duration,
    stall: Duration,
    /// Requests of this connection being served (their responses not fully sent), and
    /// how many were ever started.
    busy: Arc<Busy>,
    /// While waiting for a request: when its headers must be in, and for which request
    /// (the count of started ones when the wait began).
    head_by: Option<(Instant, usize)>,
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

/// What a connection's requests tell its deadlines.
#[derive(Default)]
pub(super) struct Busy {
    /// Requests being served (their responses not fully sent).
    pub(super) serving: Arc<AtomicUsize>,
    /// Requests started on this connection.
    pub(super) started: AtomicUsize,
}

impl<S> Deadlines<S> {
    /// `head` is the header deadline alone: the wait for a request may last `idle + head`.
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
            head: idle.saturating_add(head),
            stall,
            busy,
            head_by: None,
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
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                // Bytes (or the end): the silence is over; the header deadline holds
                // until a request is started (`head_by` names the request it is for).
                this.read_timer.disarm();
                Poll::Ready(r)
            }
            Poll::Pending if waiting => {
                if this.read_timer.armed.is_none() {
                    let now = Instant::now();
                    // A deadline set while waiting for an earlier request is not this
                    // one's.
                    let started = this.busy.started.load(Ordering::Acquire);
                    let head_by = match this.head_by {
                        Some((at, n)) if n == started => at,
                        _ => {
                            let at = now + this.head;
                            this.head_by = Some((at, started));
                            at
                        }
                    };
                    let idle_by = now + this.idle;
                    if idle_by < head_by {
                        this.read_timer.arm(idle_by, "idle too long");
                    } else {
                        this.read_timer
                            .arm(head_by, "the request headers took too long");
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

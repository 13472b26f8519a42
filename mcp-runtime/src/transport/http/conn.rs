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

/// A connection's byte stream with two deadlines: `idle` for silence while none of its
/// requests is being served, `stall` for a write that makes no progress. Either ends the
/// connection (an I/O error hyper turns into a close).
pub(super) struct Deadlines<S> {
    inner: S,
    idle: Duration,
    stall: Duration,
    /// Requests of this connection being served (their responses not fully sent).
    busy: Arc<AtomicUsize>,
    read_timer: Option<Pin<Box<Sleep>>>,
    write_timer: Option<Pin<Box<Sleep>>>,
}

impl<S> Deadlines<S> {
    pub(super) fn new(inner: S, idle: Duration, stall: Duration, busy: Arc<AtomicUsize>) -> Self {
        Deadlines {
            inner,
            idle,
            stall,
            busy,
            read_timer: None,
            write_timer: None,
        }
    }
}

/// Polls `timer` (armed for `after` from now if it is not): `Err` once it has fired.
fn expired(
    timer: &mut Option<Pin<Box<Sleep>>>,
    after: Duration,
    cx: &mut Context<'_>,
    what: &'static str,
) -> io::Result<()> {
    let t = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + after)));
    match t.as_mut().poll(cx) {
        Poll::Ready(()) => {
            tracing::debug!("closing a connection: {what}");
            Err(io::Error::new(io::ErrorKind::TimedOut, what))
        }
        Poll::Pending => Ok(()),
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Deadlines<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.read_timer = None;
                Poll::Ready(r)
            }
            Poll::Pending if this.busy.load(Ordering::Acquire) == 0 => {
                expired(&mut this.read_timer, this.idle, cx, "idle too long")?;
                Poll::Pending
            }
            Poll::Pending => {
                // A request is being served: silence from the client is expected.
                this.read_timer = None;
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
                self.write_timer = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                expired(
                    &mut self.write_timer,
                    self.stall,
                    cx,
                    "the client stopped reading",
                )?;
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

/// A response body that holds `guards` until it is fully sent (or dropped): the request
/// stays counted while its response streams.
pub(super) fn holding(body: Body, guards: Vec<Slot>) -> Body {
    struct Holding {
        body: Body,
        _guards: Vec<Slot>,
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
    if guards.is_empty() {
        return body;
    }
    Body::new(Holding {
        body,
        _guards: guards,
    })
}

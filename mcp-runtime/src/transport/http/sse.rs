//! Server-sent events: a request's notifications then its response, and listen streams.

use crate::server::Listen;
use crate::server::reply::Reply;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures_util::StreamExt;
use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;
use tokio::sync::mpsc;

fn sse_frame(json: &str) -> Result<Bytes, Infallible> {
    Ok(Bytes::from(format!("data: {json}\n\n")))
}

fn sse_headers(resp: &mut Response) {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

/// A `subscriptions/listen` stream: the acknowledgement, then notifications, with a
/// comment line as keep-alive when idle. It ends with the listen result when the server
/// shuts down; when the client leaves, dropping the body ends the subscription.
pub(super) fn listen_response(listen: Listen, keep_alive: Duration) -> Response {
    // The messages as a stream of their own, so that a keep-alive tick does not drop a
    // `next` half done (the acknowledgement's task lookups, a task change being read):
    // the stream keeps it, and the next poll goes on with it.
    let messages =
        futures_util::stream::unfold(
            listen,
            |mut l| async move { l.next().await.map(|msg| (msg, l)) },
        )
        .boxed();
    let stream = futures_util::stream::unfold(messages, move |mut m| async move {
        match tokio::time::timeout(keep_alive, m.next()).await {
            Ok(Some(msg)) => Some((sse_frame(&msg), m)),
            Ok(None) => None,
            Err(_) => Some((Ok(Bytes::from_static(b":\n\n")), m)),
        }
    });
    let mut resp = Response::new(Body::from_stream(stream.boxed()));
    sse_headers(&mut resp);
    resp
}

/// A legacy session's GET stream: the messages not tied to a request, with comment lines
/// as keep-alive; it ends when the session does, or when the token it was opened with
/// expires (`expires`), or the server shuts down (`stop`). `on_end` goes with it (the
/// session's idle time starts then).
pub(super) fn session_stream(
    rx: mpsc::Receiver<String>,
    keep_alive: Duration,
    expires: Option<tokio::time::Instant>,
    on_end: super::legacy::Touch,
    stop: tokio_util::sync::CancellationToken,
) -> Response {
    let state = (rx, on_end, stop);
    let stream = futures_util::stream::unfold(state, move |(mut rx, on_end, stop)| async move {
        let expired = async {
            match expires {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            // The server shuts down: the stream ends, so its connection can close.
            () = stop.cancelled() => None,
            // The caller's token expired: the stream ends (the client opens another
            // with a token that is still valid).
            () = expired => None,
            next = tokio::time::timeout(keep_alive, rx.recv()) => match next {
                Ok(Some(msg)) => Some((sse_frame(&msg), (rx, on_end, stop))),
                Ok(None) => None,
                Err(_) => Some((Ok(Bytes::from_static(b":\n\n")), (rx, on_end, stop))),
            },
        }
    });
    let mut resp = Response::new(Body::from_stream(stream.boxed()));
    sse_headers(&mut resp);
    resp
}

/// Streams the request's notifications, then its response, then ends the stream.
pub(super) fn sse_response<F>(
    first: Option<String>,
    fut: Option<std::pin::Pin<Box<F>>>,
    mut rx: mpsc::Receiver<String>,
    reply: Option<String>,
) -> Response
where
    F: Future<Output = Reply> + Send + 'static,
{
    struct St<F: Future> {
        pending: Option<String>,
        fut: Option<std::pin::Pin<Box<F>>>,
        rx: mpsc::Receiver<String>,
        reply: Option<String>,
    }
    if fut.is_none() {
        rx.close();
    }
    let st = St {
        pending: first,
        fut,
        rx,
        reply,
    };
    let stream = futures_util::stream::unfold(Some(st), |st| async move {
        let mut st = st?;
        if let Some(p) = st.pending.take() {
            return Some((sse_frame(&p), Some(st)));
        }
        if st.fut.is_none() {
            // The handler finished: flush what it queued, then the response.
            if let Ok(n) = st.rx.try_recv() {
                return Some((sse_frame(&n), Some(st)));
            }
            let reply = st.reply.take()?;
            return Some((sse_frame(&reply), None));
        }
        let fut = st.fut.as_mut()?;
        tokio::select! {
            biased;
            note = st.rx.recv() => match note {
                Some(n) => Some((sse_frame(&n), Some(st))),
                None => {
                    // A withheld reply (a cancelled request) ends the stream unanswered.
                    let reply = fut.as_mut().await.into_answer()?;
                    Some((sse_frame(&reply), None))
                }
            },
            reply = fut.as_mut() => {
                st.fut = None;
                st.rx.close();
                st.reply = reply.into_answer();
                if let Ok(n) = st.rx.try_recv() {
                    return Some((sse_frame(&n), Some(st)));
                }
                let reply = st.reply.take()?;
                Some((sse_frame(&reply), None))
            }
        }
    });
    let mut resp = Response::new(Body::from_stream(stream.boxed()));
    sse_headers(&mut resp);
    resp
}

//! One request at the transport: Host/Origin, the bearer token, media types, admission,
//! the body (size and read deadline), then the core; and the reply as HTTP (the status of
//! its error class, JSON or SSE, the challenges).

use super::headers::{SESSION_HEADER, Single, VERSION_HEADER};
use super::legacy::LegacyPost;
use super::{HeaderGuard, HttpServer, auth, conn, headers, origin, sse};
use crate::protocol::{RpcError, json::parse_strict};
use crate::server::parts::Streams;
use crate::server::reply::{ErrorClass, Rejection, Reply};
use crate::server::route::Prepared;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use http_body_util::BodyExt;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use tokio::sync::mpsc;

/// The HTTP status of a reply: fixed by the spec for the classes that have one, 200 for
/// errors of requests that were understood (the body carries the JSON-RPC error).
pub(super) fn status_of(error: Option<ErrorClass>) -> StatusCode {
    match error {
        None | Some(ErrorClass::Failed) => StatusCode::OK,
        Some(
            ErrorClass::Malformed
            | ErrorClass::Header
            | ErrorClass::Meta
            | ErrorClass::Version
            | ErrorClass::Capability,
        ) => StatusCode::BAD_REQUEST,
        Some(ErrorClass::UnknownMethod) => StatusCode::NOT_FOUND,
        Some(ErrorClass::Busy) => StatusCode::SERVICE_UNAVAILABLE,
        Some(ErrorClass::Forbidden) => StatusCode::FORBIDDEN,
    }
}

pub(super) fn json_reply(r: Reply) -> Response {
    if r.is_withheld() {
        return StatusCode::ACCEPTED.into_response();
    }
    let status = status_of(r.error);
    let needs = scopes_needed(&r);
    with_needed_scopes(json_body(status, r.body), needs)
}

/// `resp` with the scopes its refused call needed left on it (for the `403` challenge
/// that `handle_post` adds), whatever the media type of the answer.
fn with_needed_scopes(mut resp: Response, needs: Option<auth::NeedsScopes>) -> Response {
    if let Some(n) = needs {
        resp.extensions_mut().insert(n);
    }
    resp
}

/// A JSON body with `status`, built directly (no header value parsed or copied).
pub(super) fn json_body(status: StatusCode, body: String) -> Response {
    let mut resp = Response::new(axum::body::Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// The scopes a call refused for its scopes needed (for the `403` challenge).
pub(super) fn scopes_needed(r: &Reply) -> Option<auth::NeedsScopes> {
    if r.error != Some(ErrorClass::Forbidden) {
        return None;
    }
    let data = r.rpc.as_ref()?.1.data()?;
    let scopes = data.get("requiredScopes")?.as_array()?;
    Some(auth::NeedsScopes(
        scopes
            .iter()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect(),
    ))
}

/// The 403 answer to a failed Host/Origin check.
pub(super) fn forbidden(why: &str) -> Response {
    refuse(
        StatusCode::FORBIDDEN,
        RpcError::invalid_request(format!("forbidden: {why}")),
    )
}

pub(super) async fn handle_get_or_delete(
    State(s): State<Arc<HttpServer>>,
    req: Request,
) -> Response {
    if let Err(why) = origin::check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    // GET and DELETE mean something only for a legacy session. Without a session header
    // they cannot be served, whoever asks: 405 comes before authentication.
    if !(s.server.inner.legacy.enabled && req.headers().contains_key(&headers::SESSION_HEADER)) {
        return method_not_allowed(false);
    }
    let caller = match &s.server.inner.settings.auth {
        Some(a) => match auth::authenticate(a, req.headers(), s.config.retry_after).await {
            Ok(p) => Some(p),
            Err(resp) => return resp,
        },
        None => None,
    };
    // axum routes HEAD here too: it is neither a session's stream nor its end.
    let legacy = match *req.method() {
        Method::GET => s.legacy_get(req.headers(), caller.as_deref()),
        Method::DELETE => s.legacy_delete(req.headers(), caller.as_deref()),
        _ => None,
    };
    if let Some(resp) = legacy {
        return resp;
    }
    // A session header that is not one value (repeated), or HEAD.
    method_not_allowed(false)
}

/// What the MCP endpoint's Host and Origin check lets through, as middleware around
/// another route (`/metrics`).
#[cfg(feature = "metrics")]
pub(super) async fn host_checked(
    State(s): State<Arc<HttpServer>>,
    req: Request,
    next: axum::middleware::Next,
) -> Response {
    match origin::check_host_origin(&s.config, &req) {
        Ok(()) => next.run(req).await,
        Err(why) => forbidden(why),
    }
}

/// Any other method (PUT, PATCH, OPTIONS, ...): Host and Origin are checked first, as for
/// every method, then 405 with a JSON-RPC error body.
pub(super) async fn handle_other(State(s): State<Arc<HttpServer>>, req: Request) -> Response {
    if let Err(why) = origin::check_host_origin(&s.config, &req) {
        return forbidden(why);
    }
    method_not_allowed(s.server.inner.legacy.enabled)
}

/// 405 naming the methods taken: POST, and GET and DELETE too when they can be (`sessions`:
/// legacy sessions are served).
fn method_not_allowed(sessions: bool) -> Response {
    let (allow, what) = match sessions {
        true => (
            "POST, GET, DELETE",
            "POST (GET and DELETE: with a legacy session)",
        ),
        false => ("POST", "POST only"),
    };
    let mut resp = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        RpcError::invalid_request(format!("this MCP endpoint accepts {what}")),
    );
    resp.headers_mut()
        .insert(header::ALLOW, axum::http::HeaderValue::from_static(allow));
    resp
}

/// POST on the MCP endpoint (every MCP request), as a route service rather than an axum
/// handler: axum boxes a handler's future together with its extractors' (1,248 bytes),
/// over the 1,032 bytes glibc's per-thread cache takes, so each request's box went through
/// the arena; a service's future is boxed alone (872 bytes; a test below holds it under
/// the cache's limit).
pub(super) fn post_service(
    s: Arc<HttpServer>,
) -> impl tower::Service<
    Request,
    Response = Response,
    Error = Infallible,
    Future = impl Future<Output = Result<Response, Infallible>> + Send,
> + Clone
+ Send
+ Sync
+ 'static {
    tower::service_fn(move |req| handle_post(Arc::clone(&s), req).map(Ok))
}

fn handle_post(s: Arc<HttpServer>, req: Request) -> impl Future<Output = Response> + Send {
    // The request is split before the future is made and its headers lent to the rest,
    // so that the future holds them once (an `async fn` keeps what it is given by value
    // twice: as given, and as its local), and it is moved into a box per request. The
    // rest of the head (method, URI, extensions) is not read from here on: it stays out.
    let origin = origin::check_host_origin(&s.config, &req);
    debug_assert_eq!(req.method(), Method::POST);
    let (axum::http::request::Parts { headers: head, .. }, body) = req.into_parts();
    async move {
        let mut resp = match origin {
            Ok(()) => serve_post(&s, &head, body).await,
            Err(why) => forbidden(why),
        };
        if let Some(auth::NeedsScopes(needed)) = resp.extensions_mut().remove::<auth::NeedsScopes>()
            && let Some(a) = &s.server.inner.settings.auth
        {
            auth::insufficient_scope(&mut resp, a, &needed);
        }
        if resp.status() == StatusCode::SERVICE_UNAVAILABLE
            && !resp.headers().contains_key(header::RETRY_AFTER)
        {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, s.config.retry_after.into());
        }
        resp
    }
}

/// Why a request body was not read whole.
enum BodyError {
    /// Over the body limit.
    TooLarge,
    /// Over the request bytes in flight (`weigh`).
    Busy,
    /// The connection failed while it was read.
    Broken,
}

/// Reads a body of at most `limit` bytes. With `weigh`, each part counts against the
/// request bytes in flight as it arrives (a body of unknown length).
async fn read_body(
    mut body: axum::body::Body,
    limit: usize,
    mut weigh: Option<(&crate::server::ServerInner, &mut crate::server::slot::Slot)>,
) -> Result<Bytes, BodyError> {
    // One part (the usual case) is kept as it came, without a copy; more are joined.
    let mut first = Bytes::new();
    let mut joined: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| BodyError::Broken)?.into_data() else {
            continue;
        };
        if first.len() + joined.len() + data.len() > limit {
            return Err(BodyError::TooLarge);
        }
        if let Some((server, slot)) = &mut weigh
            && !server.weigh(slot, data.len())
        {
            return Err(BodyError::Busy);
        }
        if first.is_empty() && joined.is_empty() {
            first = data;
        } else {
            joined.extend_from_slice(&std::mem::take(&mut first));
            joined.extend_from_slice(&data);
        }
    }
    Ok(if joined.is_empty() {
        first
    } else {
        Bytes::from(joined)
    })
}

/// An error the transport answers itself, before anything was routed: a JSON-RPC error
/// body (no id) with `status`.
pub(super) fn refuse(status: StatusCode, error: RpcError) -> Response {
    json_body(status, refusal(error).body)
}

/// The reply of [`refuse`] and [`refuse_request`].
fn refusal(error: RpcError) -> Reply {
    Reply::rejection(None, Rejection::new(ErrorClass::Malformed, error))
}

/// [`refuse`] for a POST to the MCP endpoint refused for what it is (its media types, its
/// body's size, or a body that could not be read): a request answered with an error, so
/// counted in the request metrics as one refused by the core is (its method unknown: the
/// body is not read). The refusals before it (Host/Origin, authentication) and as busy
/// (`mcp_requests_refused_total`) are not.
fn refuse_request(status: StatusCode, error: RpcError) -> Response {
    let reply = refusal(error);
    #[cfg(feature = "metrics")]
    crate::server::metrics::rejected("unknown", &reply);
    json_body(status, reply.body)
}

/// A reply in the media type the client accepts: JSON, or one SSE event when it accepts
/// only `text/event-stream`. A withheld reply (a cancelled legacy request) is an SSE
/// stream that ends unanswered when the client takes SSE: a POST that carried a request
/// is answered with JSON or SSE, never a bare 202.
pub(super) fn answer(r: Reply, (accepts_json, accepts_sse): (bool, bool)) -> Response {
    if accepts_json && !(accepts_sse && r.is_withheld()) {
        json_reply(r)
    } else {
        let status = status_of(r.error);
        let needs = scopes_needed(&r);
        let mut resp = sse::sse_response(
            None,
            None::<std::pin::Pin<Box<std::future::Ready<Reply>>>>,
            mpsc::channel(1).1,
            r.into_answer(),
        );
        *resp.status_mut() = status;
        with_needed_scopes(resp, needs)
    }
}

/// A POST whose Host and Origin passed.
async fn serve_post(s: &HttpServer, head: &HeaderMap, body: axum::body::Body) -> Response {
    // Who is calling, before anything else is read (a server without `Auth`: nobody).
    // The rarer ways (authentication, a legacy session's message) are boxed where they
    // are awaited: this future, which every POST allocates and moves, then has the size
    // of the common way (408 bytes instead of 960 in the bench build).
    let caller = match &s.server.inner.settings.auth {
        Some(a) => match Box::pin(auth::authenticate(a, head, s.config.retry_after)).await {
            Ok(p) => Some(p),
            Err(resp) => return resp,
        },
        None => None,
    };
    if !headers::is_json_content_type(head) {
        return refuse_request(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            RpcError::invalid_request("Content-Type must be application/json"),
        );
    }
    if head
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .any(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
    {
        return refuse_request(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            RpcError::invalid_request("request Content-Encoding is not supported"),
        );
    }
    let (accepts_json, accepts_sse) = headers::accepted(head);
    if !accepts_json && !accepts_sse {
        return refuse_request(
            StatusCode::NOT_ACCEPTABLE,
            RpcError::invalid_request("Accept must allow application/json or text/event-stream"),
        );
    }
    // Admission, before the body is read: a busy server answers at once, and closes the
    // connection (the unread body cannot be skipped safely).
    let busy = |error: RpcError| {
        let mut resp = refuse(StatusCode::SERVICE_UNAVAILABLE, error);
        resp.headers_mut().insert(
            header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
        resp
    };
    let in_session = || s.server.inner.legacy.enabled && head.contains_key(&SESSION_HEADER);
    let Some((mut slot, reserved)) = s.server.inner.admit_or_reserve(in_session) else {
        crate::telemetry::cap_reached("too many requests in flight");
        return busy(Rejection::busy().error);
    };
    let too_many_bytes = || {
        crate::telemetry::cap_reached("too many request bytes in flight");
        busy(Rejection::busy_bytes().error)
    };
    let limit = s.config.body_limit;
    let too_large = || {
        refuse_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            RpcError::invalid_request(format!("the request body is larger than {limit} bytes")),
        )
    };
    let declared = head
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large();
    }
    // The request's bytes count against the bytes in flight: a declared length at once,
    // a body of unknown length as it arrives.
    if let Some(n) = declared
        && !s.server.inner.weigh(&mut slot, n as usize)
    {
        return too_many_bytes();
    }
    let deadline = s.config.body_read_timeout;
    let outcome = {
        let mut read = std::pin::pin!(read_body(
            body,
            limit,
            declared.is_none().then_some((&s.server.inner, &mut slot)),
        ));
        // A body that came with its head (the usual case) is read at the first poll,
        // without setting up the deadline (a clock read and a `Sleep`); only one still
        // arriving is read under it.
        match std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await {
            Poll::Ready(r) => Ok(r),
            Poll::Pending => tokio::time::timeout(deadline, read).await,
        }
    };
    let bytes: Bytes = match outcome {
        Ok(Ok(b)) => b,
        Ok(Err(BodyError::TooLarge)) => return too_large(),
        Ok(Err(BodyError::Busy)) => return too_many_bytes(),
        Ok(Err(BodyError::Broken)) => {
            return refuse_request(
                StatusCode::BAD_REQUEST,
                RpcError::invalid_request("the request body could not be read"),
            );
        }
        Err(_) => {
            tracing::debug!("request body too slow");
            let mut resp = refuse_request(
                StatusCode::REQUEST_TIMEOUT,
                RpcError::invalid_request(format!(
                    "the request body did not arrive within {deadline:?}"
                )),
            );
            resp.headers_mut().insert(
                header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
            return resp;
        }
    };
    let msg = match parse_strict(&bytes) {
        Ok(v) => v,
        Err(e) => {
            // Not JSON (`-32700`), or JSON this server does not take (a duplicate member,
            // a number out of range): a request refused before routing, counted so.
            let reply = Reply::unparsable(&bytes, e);
            #[cfg(feature = "metrics")]
            crate::server::metrics::rejected("unknown", &reply);
            return answer(reply, (accepts_json, accepts_sse));
        }
    };
    // Let in past the cap for an answer or a notification only.
    if reserved && crate::protocol::envelope::is_request(&msg) {
        crate::telemetry::cap_reached("too many requests in flight");
        #[cfg(feature = "metrics")]
        crate::server::metrics::refused_busy();
        return refuse(StatusCode::SERVICE_UNAVAILABLE, Rejection::busy().error);
    }
    // Read once: the legacy classifier and the modern header checks both need it.
    let version = Single::read(head, &VERSION_HEADER);
    let msg = match s.legacy_post(msg, head, version, caller.as_ref()) {
        LegacyPost::Modern(msg) => msg,
        LegacyPost::Answer(resp) => return resp.map(|b| conn::holding(b, slot)),
        LegacyPost::InSession { msg, session, id } => {
            let accepts = (accepts_json, accepts_sse);
            let serve = s.serve_in_session(msg, &session, id, accepts, caller.as_ref(), slot);
            return Box::pin(serve).await;
        }
    };

    let streams = if accepts_sse {
        Streams::OnDemand
    } else {
        Streams::None
    };
    let mut job = match s.server.prepare(
        msg,
        &HeaderGuard::with_version(head, version).with_caller(caller),
        streams,
    ) {
        Prepared::Reply(r) => return answer(r, (accepts_json, accepts_sse)),
        Prepared::Notification { .. } | Prepared::Answer => {
            return StatusCode::ACCEPTED.into_response();
        }
        Prepared::Listen(listen) if accepts_sse => {
            // Counted among open listen streams, not among requests in flight.
            drop(slot);
            return sse::listen_response(listen, s.config.keep_alive);
        }
        Prepared::Listen(_) => {
            return refuse(
                StatusCode::NOT_ACCEPTABLE,
                RpcError::invalid_request(
                    "subscriptions/listen answers with text/event-stream; add it to Accept",
                ),
            );
        }
        Prepared::Call(job) => job,
    };
    let rx = job.take_notifications();
    respond(job.run(), rx, (accepts_json, accepts_sse))
        .await
        .map(|b| conn::holding(b, slot))
}

/// The answer to a request that runs: JSON, unless the handler streams (its first
/// notification, or a request to the client, switches to SSE: those go first, then the
/// response).
pub(super) async fn respond<F>(
    fut: F,
    rx: Option<mpsc::Receiver<String>>,
    accepts: (bool, bool),
) -> Response
where
    F: Future<Output = Reply> + Send + 'static,
{
    let Some(mut rx) = rx else {
        return answer(fut.await, accepts);
    };
    let accepts_json = accepts.0;
    let mut fut = Box::pin(fut);
    if !accepts_json {
        // Only an event stream is accepted, so the answer is one, opened before the
        // handler is done. But first the handler's first poll: what it checks before it
        // first waits (a capability it needs, `-32021`) still gets the status the spec
        // fixes for it, rather than an error event after a 200.
        let first = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
        return match first {
            Poll::Pending => sse::sse_response(None, Some(fut), rx, None),
            Poll::Ready(reply) => finished(reply, rx, accepts),
        };
    }
    tokio::select! {
        biased;
        Some(note) = rx.recv() => sse::sse_response(Some(note), Some(fut), rx, None),
        reply = &mut fut => finished(reply, rx, accepts),
    }
}

/// The answer to a request whose handler finished before the response began: an event
/// stream when it queued notifications first (they go before the response), else
/// [`answer`].
fn finished(reply: Reply, mut rx: mpsc::Receiver<String>, accepts: (bool, bool)) -> Response {
    match rx.try_recv() {
        Ok(first) => sse::sse_response(
            Some(first),
            None::<std::pin::Pin<Box<std::future::Ready<Reply>>>>,
            rx,
            reply.into_answer(),
        ),
        Err(_) => answer(reply, accepts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every POST's future is allocated on its own (axum boxes a route service's future).
    /// glibc's per-thread cache takes blocks of up to 1,032 bytes; a larger one goes
    /// through the arena (its lock, and a consolidation of its free blocks) at every
    /// request. This holds it under that (872 bytes on 2026-12-06, with the default
    /// features and with all of them).
    #[test]
    fn a_posts_future_fits_the_allocators_per_thread_cache() {
        use tower::Service;
        let server = crate::Server::builder("x", "1").build().unwrap();
        let mut posts = post_service(Arc::new(server.http()));
        let req = Request::post("/mcp")
            .body(axum::body::Body::empty())
            .unwrap();
        let fut = posts.call(req);
        let size = std::mem::size_of_val(&fut);
        assert!(size <= 1032, "a POST's future is {size} bytes");
    }
}

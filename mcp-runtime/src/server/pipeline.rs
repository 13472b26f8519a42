//! The one handler pipeline. Every `tools/call`, `prompts/get` and `resources/read` runs
//! through [`Server::run_item`]: open the round (when the handler asks for input), build
//! the request the handler sees, run the handler under the guard (panic → `-32603`,
//! timeout → `-32603`), inside its span, cancelled when the transport drops it; then turn
//! the outcome (complete, input required, failed) into a reply through the one result
//! envelope. The handler it runs already carries the middleware: `build` wraps each
//! item's handler in the chain once, so middleware runs here for every kind.

use super::def::kind::Kind;
use super::def::{Call, Handler};
use super::limit::Limited;
use super::parts::Parts;
use super::reply::{Rejection, Reply};
use super::route::Prepared;
use super::session::Session;
use super::{Server, ServerInner};
use crate::error::ErrorKind;
use crate::mrtr::round::{Binding, Finished, InputRequired, Round};
use crate::protocol::envelope::ResultType;
use crate::protocol::legacy;
use crate::protocol::{ErrorCode, RequestId, RpcError};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How one run of a handler ended.
pub(crate) enum Outcome<T> {
    /// The final result.
    Complete(T),
    /// The handler asked for input: the round ends with `input_required`.
    InputRequired(InputRequired),
    /// A JSON-RPC error.
    Failed(Rejection),
    /// The handler has its inputs and reached its body, in the round before a task
    /// (the task runs it).
    Body,
}

/// Runs a handler: catches panics (`-32603`, and the server keeps serving) and enforces
/// the request timeout (`-32603`). `make` builds the handler's future; a panic while
/// building it is caught too.
pub(crate) async fn guarded<T>(
    timeout: Duration,
    make: impl FnOnce() -> BoxFuture<'static, T>,
) -> Result<T, RpcError> {
    let fut = std::panic::catch_unwind(AssertUnwindSafe(make))
        .map_err(|_| RpcError::internal("Internal error: the handler panicked"))?;
    match Limited::new(timeout, AssertUnwindSafe(fut).catch_unwind()).await {
        None => {
            tracing::warn!("request timed out");
            Err(RpcError::internal("Internal error: the request timed out"))
        }
        Some(Err(_)) => {
            tracing::error!("handler panicked");
            Err(RpcError::internal("Internal error: the handler panicked"))
        }
        Some(Ok(r)) => Ok(r),
    }
}

/// A request to run: its future produces the response.
pub(crate) struct Job {
    id: RequestId,
    /// The request's work, boxed once where it is made; [`Run`] adds the span and the
    /// cancellation around it without moving it again.
    fut: BoxFuture<'static, Reply>,
    span: tracing::Span,
    notifications: Option<mpsc::Receiver<String>>,
    cancel: CancellationToken,
}

impl Job {
    /// A request's work: `body` runs under `span`; `cancel` fires when the job ends: if it
    /// is dropped before it finishes (client gone, cancelled, shutdown) the handler's
    /// `Context::cancellation()` sees it, and once it has its answer the request's stream
    /// closes (a `Progress` kept by a task it spawned sends nothing more).
    pub(crate) fn new(
        id: RequestId,
        cancel: CancellationToken,
        span: tracing::Span,
        notifications: Option<mpsc::Receiver<String>>,
        body: impl Future<Output = Reply> + Send + 'static,
    ) -> Job {
        Job::boxed(id, cancel, span, notifications, Box::pin(body))
    }

    /// [`Job::new`] of work already boxed.
    pub(crate) fn boxed(
        id: RequestId,
        cancel: CancellationToken,
        span: tracing::Span,
        notifications: Option<mpsc::Receiver<String>>,
        fut: BoxFuture<'static, Reply>,
    ) -> Job {
        Job {
            id,
            fut,
            span,
            notifications,
            cancel,
        }
    }

    /// The token that cancels the request's handler.
    pub(crate) fn cancellation(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The same job, its reply passed through `f`.
    pub(crate) fn map_reply(self, f: fn(Reply) -> Reply) -> Job {
        let fut = self.fut;
        Job {
            fut: Box::pin(async move { f(fut.await) }),
            ..self
        }
    }

    /// The same job, measured by `watch`: its answer, or its cancellation once started.
    #[cfg(feature = "metrics")]
    pub(crate) fn observe(self, mut watch: super::metrics::Watch) -> Job {
        let fut = self.fut;
        Job {
            fut: Box::pin(async move {
                watch.start();
                let reply = fut.await;
                watch.end(&reply);
                reply
            }),
            ..self
        }
    }

    /// The request's own notification channel (for `Streams::OnDemand`).
    pub(crate) fn take_notifications(&mut self) -> Option<mpsc::Receiver<String>> {
        self.notifications.take()
    }

    /// The request id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Runs the request. Dropping the future cancels it.
    pub(crate) fn run(self) -> Run {
        Run {
            fut: Some(self.fut),
            span: self.span,
            cancel: Some(self.cancel),
        }
    }
}

/// A running [`Job`]: polls its work inside the request's span (entered once per poll,
/// as `tracing`'s `Instrumented` does), and fires the request's cancellation when the
/// work has its answer or is dropped before it.
pub(crate) struct Run {
    /// `None` once the work has its answer (dropped then, outside the span: a finished
    /// future holds nothing that logs).
    fut: Option<BoxFuture<'static, Reply>>,
    span: tracing::Span,
    /// `Some` until fired.
    cancel: Option<CancellationToken>,
}

impl Future for Run {
    type Output = Reply;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let this = self.get_mut();
        let Some(fut) = &mut this.fut else {
            return Poll::Pending;
        };
        let polled = {
            let _entered = this.span.enter();
            fut.as_mut().poll(cx)
        };
        if polled.is_ready() {
            this.fut = None;
            if let Some(c) = this.cancel.take() {
                c.cancel();
            }
        }
        polled
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(fut) = self.fut.take() {
            // Not finished: what the handler's future drops may log; it does so in the
            // request's span.
            let _entered = self.span.enter();
            drop(fut);
        }
        if let Some(c) = self.cancel.take() {
            c.cancel();
        }
    }
}

/// A check of the arguments before the handler runs: it hands the arguments back, or
/// answers the request with a result instead (a tool's `isError` result for invalid
/// arguments).
pub(crate) type ArgumentCheck<K> =
    Box<dyn FnOnce(Map<String, Value>) -> Result<Map<String, Value>, <K as Kind>::Output> + Send>;

/// One request to an item (a tool, prompt or resource), ready for the pipeline.
pub(crate) struct ItemRequest<K: Kind> {
    pub(crate) handler: Handler<K>,
    /// The tool or prompt name, or the resource URI.
    pub(crate) target: String,
    /// The MIME type the resource declares.
    pub(crate) mime_type: Option<Arc<str>>,
    /// The namespaces the item is mounted under, innermost first.
    pub(crate) mounts: Option<Arc<[String]>>,
    /// What the call hands to the handler's parameters.
    pub(crate) arguments: Map<String, Value>,
    /// A resource read's template variables read as lists (see `Call::lists`).
    pub(crate) lists: BTreeMap<String, Vec<String>>,
    /// What its `requestState` is bound to, when the handler asks for input.
    pub(crate) binding: Option<Binding>,
    /// Checked once the round is open, before the handler runs.
    pub(crate) check: Option<ArgumentCheck<K>>,
    /// The handler asks for input (set with `binding`; kept when `binding` is taken).
    pub(crate) uses_input: bool,
}

impl Server {
    /// Runs an item request through the pipeline; `complete` serializes its final result.
    pub(crate) fn run_item<K: Kind>(
        &self,
        parts: Parts,
        params: &mut Map<String, Value>,
        item: ItemRequest<K>,
        complete: impl FnOnce(&ServerInner, &RequestId, K::Output) -> Reply + Send + 'static,
    ) -> Prepared {
        let inner = &self.inner;
        let mut item = item;
        let session = parts.session.clone();
        let round = match item.binding.take() {
            None => None,
            // A legacy session asks with real server→client requests: no rounds.
            Some(_) if session.is_some() => None,
            Some(binding) => {
                let caps = parts.meta.capabilities.clone();
                match Round::open(Arc::clone(&inner.sealer), binding, params, caps) {
                    // Boxed: most requests have no round, and their futures stay small.
                    Ok(r) => Some(Box::new(r)),
                    Err(e) => {
                        return Prepared::Reply(Reply::rejection(
                            Some(&parts.id),
                            Rejection::failed(e),
                        ));
                    }
                }
            }
        };
        if let Some(check) = item.check.take() {
            match check(std::mem::take(&mut item.arguments)) {
                Ok(arguments) => item.arguments = arguments,
                Err(out) => return Prepared::Reply(complete(inner, &parts.id, out)),
            }
        }
        let live = match &session {
            Some(s) if item.uses_input => Some((
                Arc::clone(s),
                crate::Input::live(
                    s.capabilities.clone(),
                    Default::default(),
                    Default::default(),
                    inner.sealer.max_rounds,
                ),
            )),
            _ => None,
        };
        let input = round
            .as_deref()
            .map(Round::input)
            .or_else(|| live.as_ref().map(|(_, i)| i.clone()));
        let (request, span, notifications) = parts.into_request(
            inner,
            K::METHOD,
            Some(item.target),
            item.mime_type,
            item.mounts,
            input,
        );
        let id = request.id.clone();
        let cancel = request.cancel.clone();
        let mut call = Call::new(item.arguments, request);
        call.lists = item.lists;
        let server = Arc::clone(inner);
        let reply_id = id.clone();
        // Each way of running is boxed on its own, so that the common one is no larger
        // than it needs (a future's size is its largest state's, and boxing copies it).
        let handler = item.handler;
        let body: BoxFuture<'static, Reply> = match live {
            Some((session, input)) => Box::pin(async move {
                let outcome = invoke_live(&server, handler, call, &session, &input).await;
                respond(&server, &reply_id, outcome, complete)
            }),
            // A legacy request that asks for nothing.
            None if session.is_some() => Box::pin(async move {
                let outcome = invoke_live_plain(&server, handler, call).await;
                respond(&server, &reply_id, outcome, complete)
            }),
            None => Box::pin(async move {
                let outcome = invoke(&server, handler, call, round).await;
                respond(&server, &reply_id, outcome, complete)
            }),
        };
        Prepared::Call(Job::boxed(id, cancel, span, notifications, body))
    }
}

/// Runs the handler once and says how it ended.
pub(crate) async fn invoke<K: Kind>(
    server: &ServerInner,
    handler: Handler<K>,
    call: Call<K>,
    round: Option<Box<Round>>,
) -> Outcome<K::Output> {
    let timeout = server.limits.request_timeout;
    let request = std::sync::Arc::clone(&call.request);
    if let Some(round) = &round
        && let Err(e) = round.redeem().await
    {
        return Outcome::Failed(Rejection::failed(e));
    }
    let run = guarded(timeout, || match &round {
        Some(round) => Box::pin(round.drive(handler(call))),
        None => handler(call).map(Finished::Done).boxed(),
    })
    .await;
    match run {
        Err(e) => Outcome::Failed(Rejection::failed(e)),
        Ok(Finished::Asked) => match round.as_deref().map(Round::seal) {
            Some(Ok(asked)) => Outcome::InputRequired(asked),
            Some(Err(e)) => Outcome::Failed(Rejection::failed(e)),
            None => Outcome::Failed(Rejection::failed(RpcError::internal(
                "Internal error: input asked for outside a multi-round request",
            ))),
        },
        Ok(Finished::Body) => Outcome::Body,
        Ok(Finished::Done(r)) => {
            settle::<K>(r, request.target.as_deref().unwrap_or_default(), false)
        }
    }
}

/// Runs the handler of a legacy request that asks for nothing.
async fn invoke_live_plain<K: Kind>(
    server: &ServerInner,
    handler: Handler<K>,
    call: Call<K>,
) -> Outcome<K::Output> {
    let target = call.request.target.clone().unwrap_or_default();
    match guarded(server.limits.request_timeout, || handler(call)).await {
        Err(e) => Outcome::Failed(Rejection::failed(e)),
        Ok(r) => settle::<K>(r, &target, true),
    }
}

/// Runs the handler of a legacy request that asks for input: each question becomes a
/// server→client request on the session, and its answer goes back to the waiting
/// question; the handler runs once.
async fn invoke_live<K: Kind>(
    server: &ServerInner,
    handler: Handler<K>,
    call: Call<K>,
    session: &Arc<Session>,
    input: &crate::Input,
) -> Outcome<K::Output> {
    use futures_util::StreamExt;
    use futures_util::stream::FuturesUnordered;
    let request = Arc::clone(&call.request);
    let target = request.target.clone().unwrap_or_default();
    let fut = guarded(server.limits.request_timeout, || handler(call));
    tokio::pin!(fut);
    let asked = input.asked();
    let mut waiting = FuturesUnordered::new();
    // Each question sent, by key: cancelled when the handler stops waiting for it.
    let mut sent: BTreeMap<String, tokio_util::sync::CancellationToken> = BTreeMap::new();
    loop {
        tokio::select! {
            out = &mut fut => return match out {
                Err(e) => Outcome::Failed(Rejection::failed(e)),
                Ok(r) => settle::<K>(r, &target, true),
            },
            () = asked.notified() => {
                // A question the handler stopped waiting for: its request is dropped,
                // which cancels it at the client (`notifications/cancelled`).
                for key in input.take_withdrawn() {
                    if let Some(stop) = sent.remove(&key) {
                        stop.cancel();
                    }
                }
                for (key, question) in input.take_questions() {
                    let method = question["method"].as_str().unwrap_or_default().to_owned();
                    let mut params = question["params"].clone();
                    if method == "elicitation/create" {
                        legacy::downgrade(legacy::Shape::Elicit, session.version, &mut params);
                    }
                    match session.request(&request.sink, &key, &method, params) {
                        Ok(rx) => {
                            let stop = tokio_util::sync::CancellationToken::new();
                            sent.insert(key.clone(), stop.clone());
                            waiting.push(async move {
                                tokio::select! {
                                    answer = rx => (key, Some(answer)),
                                    () = stop.cancelled() => (key, None),
                                }
                            });
                        }
                        Err(e) => input.fail(&key, e.message().to_owned()),
                    }
                }
            }
            Some((key, answer)) = waiting.next(), if !waiting.is_empty() => {
                sent.remove(&key);
                match answer {
                    Some(Ok(Ok(v))) => input.deliver(&key, v),
                    Some(Ok(Err(e))) => input.fail(&key, e.message().to_owned()),
                    Some(Err(_)) => {
                        input.fail(&key, "the session ended before the client answered".into());
                    }
                    // Withdrawn: nobody waits for it.
                    None => {}
                }
            }
        }
    }
}

/// What a handler's return value means: a result (a tool's execution error becomes an
/// `isError` result, a resource's not-found its error), or a JSON-RPC error.
pub(crate) fn settle<K: Kind>(
    result: Result<K::Output, crate::Error>,
    target: &str,
    legacy: bool,
) -> Outcome<K::Output> {
    match result {
        Ok(out) => Outcome::Complete(out),
        // The legacy era has no `-32021`: a capability the session lacks is an execution
        // error (a tool's `isError` result, which the model sees).
        Err(crate::Error(ErrorKind::Protocol(e)))
            if legacy && e.code() == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
        {
            match K::execution_error(vec![crate::Content::text(e.message())]) {
                Ok(out) => Outcome::Complete(out),
                Err(e) => Outcome::Failed(Rejection::failed(e)),
            }
        }
        Err(crate::Error(ErrorKind::Execution(content))) => {
            tracing::debug!("the handler returned an error");
            match K::execution_error(content) {
                Ok(out) => Outcome::Complete(out),
                Err(e) => Outcome::Failed(Rejection::failed(e)),
            }
        }
        Err(crate::Error(ErrorKind::NotFound(message))) => match K::not_found(target, message) {
            Ok(out) => Outcome::Complete(out),
            Err(e) => Outcome::Failed(Rejection::failed(e)),
        },
        Err(crate::Error(ErrorKind::Protocol(e))) => Outcome::Failed(Rejection::failed(e)),
    }
}

/// The reply for an outcome: `complete` for a final result, the envelope's
/// `input_required` or an error otherwise.
pub(crate) fn respond<T>(
    server: &ServerInner,
    id: &RequestId,
    outcome: Outcome<T>,
    complete: impl FnOnce(&ServerInner, &RequestId, T) -> Reply,
) -> Reply {
    match outcome {
        Outcome::Complete(out) => complete(server, id, out),
        Outcome::InputRequired(asked) => Reply::result(
            id,
            server.envelope(ResultType::InputRequired, asked, None, None),
        ),
        Outcome::Failed(rejection) => Reply::rejection(Some(id), rejection),
        Outcome::Body => Reply::rejection(
            Some(id),
            Rejection::failed(RpcError::internal(
                "Internal error: the handler stopped at its body outside a task",
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_guard_catches_panics_and_timeouts() {
        let t = Duration::from_secs(5);
        let panics = guarded(t, || -> BoxFuture<'static, ()> { panic!("while building") }).await;
        assert_eq!(
            panics.unwrap_err().message(),
            "Internal error: the handler panicked"
        );
        let panics = guarded(t, || async { panic!("while running") }.boxed()).await;
        assert_eq!(
            panics.map(|_: ()| ()).unwrap_err().message(),
            "Internal error: the handler panicked"
        );
        let slow = guarded(Duration::from_millis(10), || {
            std::future::pending::<()>().boxed()
        })
        .await;
        assert_eq!(
            slow.unwrap_err().message(),
            "Internal error: the request timed out"
        );
        assert_eq!(guarded(t, || async { 7 }.boxed()).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn a_dropped_job_fires_its_cancellation() {
        let cancel = CancellationToken::new();
        let id = RequestId::from_value(&serde_json::json!(1)).unwrap();
        let job = Job::new(
            id,
            cancel.clone(),
            tracing::Span::none(),
            None,
            std::future::pending(),
        );
        let run = tokio::spawn(job.run());
        tokio::task::yield_now().await;
        run.abort();
        let _ = run.await;
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn a_job_runs_in_its_span_and_fires_its_cancellation_with_its_answer() {
        use std::sync::Mutex;
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry();
        let _default = tracing::subscriber::set_default(
            subscriber.with(tracing_subscriber::filter::LevelFilter::INFO),
        );
        let span = tracing::info_span!("mcp.request");
        let expected = span.id();
        assert!(expected.is_some());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let cancel = CancellationToken::new();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (record, token) = (Arc::clone(&seen), cancel.clone());
        let body = async move {
            record
                .lock()
                .unwrap()
                .push((tracing::Span::current().id(), token.is_cancelled()));
            let _ = rx.await;
            record
                .lock()
                .unwrap()
                .push((tracing::Span::current().id(), token.is_cancelled()));
            Reply::rejection(None, Rejection::malformed("done"))
        };
        let id = RequestId::from_value(&serde_json::json!(1)).unwrap();
        let mut run = Job::new(id, cancel.clone(), span, None, body).run();
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(std::pin::Pin::new(&mut run).poll(&mut cx).is_pending());
        assert_eq!(
            tracing::Span::current().id(),
            None,
            "left the span after the poll"
        );
        assert!(!cancel.is_cancelled());
        tx.send(()).unwrap();
        assert!(std::pin::Pin::new(&mut run).poll(&mut cx).is_ready());
        assert!(
            cancel.is_cancelled(),
            "fired with the answer, before the run is dropped"
        );
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen, vec![(expected.clone(), false), (expected, false)]);
        drop(run);
    }
}

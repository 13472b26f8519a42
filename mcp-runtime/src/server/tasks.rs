//! Tools running as tasks (the `io.modelcontextprotocol/tasks` extension): the round before
//! the task (a tool's declared `#[input]`s, collected by ordinary rounds), the task's
//! creation in the shared store, and the worker that runs the handler to its end. Questions
//! the handler asks become the task's `inputRequests`; answers given through any instance
//! reach it through the store; a cancel (or the task's expiry) fires its cancellation
//! token and drops it; its outcome is recorded once, and a terminal status never changes.

use super::Server;
use super::ServerInner;
use super::config::Tasks;
use super::context::{Request, TaskLink};
use super::def::kind::Tool;
use super::def::{Call, Handler};
use super::methods::tasks::TaskView;
use super::methods::tools::result_json;
use super::parts::{Parts, TransportGuard};
use super::pipeline::{ItemRequest, Job, Outcome, guarded, invoke, respond, settle};
use super::reply::{ErrorClass, Rejection, Reply};
use super::route::Prepared;
use super::slot::Slot;
use crate::mrtr::round::Round;
use crate::protocol::envelope::ResultType;
use crate::protocol::tasks::TaskStatus;
use crate::protocol::{CallToolResult, RequestId, RpcError, methods};
use crate::store::{StoreError, TaskChange, TaskRecord, TaskStore, now_ms};
use crate::{Error, Input};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDrop;
use tracing::Instrument;

/// How long a cancelled task's handler may run on after its token fired.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// How long a task's end is retried while its store fails.
const END_RETRY_FOR: Duration = Duration::from_secs(60);

/// How the reply carrying a tool result is made (`tools/call`'s own).
pub(crate) type Complete = fn(&ServerInner, &RequestId, CallToolResult) -> Reply;

/// What serves tasks. A tool that may run as one ([`ToolDef::task`](crate::def::ToolDef::task))
/// carries a reference to [`ENGINE`], and the catalog takes it from there: nothing else
/// names this code, so a server none of whose tools runs as a task does not link it.
pub(crate) struct Engine {
    /// Runs a `tools/call` as a task ([`Server::run_task`]).
    pub(crate) run: RunTask,
    /// `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub(crate) method: fn(&Server, Parts, Map<String, Value>, &dyn TransportGuard) -> Prepared,
    /// Where tasks are stored ([`store`]).
    pub(crate) store: fn(&Tasks) -> &Arc<dyn TaskStore>,
}

/// [`Server::run_task`]'s shape.
type RunTask =
    fn(&Server, Parts, &mut Map<String, Value>, ItemRequest<Tool>, bool, Complete) -> Prepared;

/// The one [`Engine`].
pub(crate) static ENGINE: Engine = Engine {
    run: Server::run_task,
    method: task_method,
    store,
};

/// Where tasks are stored: the store given, else a [`MemoryTaskStore`] made on first use.
pub(crate) fn store(tasks: &Tasks) -> &Arc<dyn TaskStore> {
    tasks
        .store
        .get_or_init(|| Arc::new(crate::store::MemoryTaskStore::new()))
}

/// `tasks/get`, `tasks/update` or `tasks/cancel`, by `parts.method`.
fn task_method(
    server: &Server,
    parts: Parts,
    params: Map<String, Value>,
    guard: &dyn TransportGuard,
) -> Prepared {
    use super::methods::tasks::{cancel, get, update};
    match parts.method.as_str() {
        methods::TASKS_UPDATE => update(server, parts, params, guard),
        methods::TASKS_CANCEL => cancel(server, parts, params, guard),
        _ => get(server, parts, params, guard),
    }
}

impl Server {
    /// Runs a `tools/call` as a task: the round before it when the tool asks for its
    /// inputs first (`upfront`), then the task, answered with its handle at once.
    pub(crate) fn run_task(
        &self,
        parts: Parts,
        params: &mut Map<String, Value>,
        item: ItemRequest<Tool>,
        upfront: bool,
        complete: Complete,
    ) -> Prepared {
        let inner = &self.inner;
        let mut item = item;
        let binding = item.binding.take();
        let uses_input = binding.is_some();
        let round = match binding {
            Some(binding) if upfront => {
                let caps = parts.meta.capabilities.clone();
                match Round::open(Arc::clone(&inner.sealer), binding, params, caps) {
                    Ok(r) => Some(r.probe()),
                    Err(e) => {
                        return Prepared::Reply(Reply::rejection(
                            Some(&parts.id),
                            Rejection::failed(e),
                        ));
                    }
                }
            }
            _ => None,
        };
        if let Some(check) = item.check.take() {
            match check(std::mem::take(&mut item.arguments)) {
                Ok(arguments) => item.arguments = arguments,
                Err(out) => return Prepared::Reply(complete(inner, &parts.id, out)),
            }
        }
        let input = round.as_ref().map(Round::input);
        let (request, span, notifications) = parts.into_request(
            inner,
            methods::TOOLS_CALL,
            Some(item.target),
            None,
            item.mounts,
            input.clone(),
        );
        let id = request.id.clone();
        let cancel = request.cancel.clone();
        let server = Arc::clone(inner);
        let handler = item.handler;
        let arguments = item.arguments;
        let reply_id = id.clone();
        let body = async move {
            let recorded = match (round, input) {
                (Some(round), Some(input)) => {
                    let call = Call::new(arguments.clone(), Arc::clone(&request));
                    match invoke(&server, Arc::clone(&handler), call, Some(Box::new(round))).await {
                        Outcome::Body => Some(input.recorded()),
                        other => return respond(&server, &reply_id, other, complete),
                    }
                }
                _ => None,
            };
            start(&server, &request, handler, arguments, uses_input, recorded).await
        };
        Prepared::Call(Job::new(id, cancel, span, notifications, body))
    }
}

/// A task id: 122 random bits, as a UUID (version 4).
fn new_task_id() -> Result<String, RpcError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)
        .map_err(|e| RpcError::internal(format!("Internal error: no randomness: {e}")))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// A store error as the client sees it: busy when the store is full, `-32603` otherwise.
pub(crate) fn store_rejection(e: &StoreError) -> Rejection {
    match e {
        StoreError::Full => Rejection::new(
            ErrorClass::Busy,
            RpcError::internal("Too many tasks; try again later"),
        ),
        e => {
            tracing::error!("task store: {e}");
            Rejection::failed(RpcError::internal("Internal error: the task store failed"))
        }
    }
}

/// Creates the task, starts its worker, and answers with the task's handle. The handle is
/// sent only once the task is in the store, so `tasks/get` finds it on any instance.
async fn start(
    server: &Arc<ServerInner>,
    request: &Arc<Request>,
    handler: Handler<Tool>,
    arguments: Map<String, Value>,
    uses_input: bool,
    recorded: Option<(BTreeMap<String, Value>, BTreeMap<String, Value>)>,
) -> Reply {
    let tasks = &server.tasks;
    let reject = |r: Rejection| Reply::rejection(Some(&request.id), r);
    let Some(slot) = Slot::acquire(&server.running_tasks, tasks.max_running) else {
        crate::telemetry::cap_reached("too many running tasks");
        return reject(Rejection::new(
            ErrorClass::Busy,
            RpcError::internal("Too many running tasks; try again later"),
        ));
    };
    let task_id = match new_task_id() {
        Ok(id) => id,
        Err(e) => return reject(Rejection::failed(e)),
    };
    // Bound to the caller when authorization names one; otherwise the unguessable id is
    // the only key.
    let owner = request
        .principal
        .as_deref()
        .map(crate::auth::Principal::key);
    let record = TaskRecord::new(task_id.clone(), tasks.ttl, tasks.poll_interval, owner)
        .leased_until(lease_from_now(tasks.lease));
    if let Err(e) = store(tasks).create(record.clone()).await {
        return reject(store_rejection(&e));
    }
    let (status_tx, status_rx) = mpsc::channel(16);
    let input = uses_input.then(|| {
        let (answers, steps) = recorded.unwrap_or_default();
        Input::live(
            request.capabilities.clone(),
            answers,
            steps,
            server.sealer.max_rounds,
        )
    });
    let link = TaskLink {
        id: task_id.clone(),
        status: status_tx,
    };
    let task_request = Arc::new(request.for_task(input.clone(), link));
    let span = tracing::info_span!("mcp.task", task_id = %task_id);
    // The lease is renewed by a task of its own, spawned before the worker (so that it
    // is not left behind in the worker's thread's next-task slot, where no other thread
    // takes it): a handler that blocks its thread (CPU work, a blocking call) must not
    // let the lease lapse. It runs until the worker has recorded the end.
    let renewer = tokio::spawn(
        renew(Arc::clone(store(tasks)), task_id.clone(), tasks.lease).instrument(span.clone()),
    );
    let worker = Worker {
        server: Arc::clone(server),
        store: Arc::clone(store(tasks)),
        id: task_id.clone(),
        target: request.target.clone().unwrap_or_default(),
        input,
        cancel: task_request.cancel.clone(),
        status: status_rx,
        keys: WireKeys::default(),
        failures: crate::telemetry::Throttle::every(WARN_EVERY),
        _renewing: AbortOnDrop::new(renewer.abort_handle()),
        _slot: slot,
    };
    let call = Call::new(arguments, task_request);
    let ttl = Duration::from_millis(record.expires_ms().saturating_sub(now_ms()));
    // Watched from before the handle is sent: a cancel (or answer) that comes before the
    // worker first runs still wakes it.
    let watch = store(tasks).watch(&task_id);
    let run = worker.run(handler, call, ttl, watch).instrument(span);
    // Its blocking sections count for the stdio connection that made the task, as the
    // request's own would (`serve_stdio` exits rather than wait for them).
    #[cfg(feature = "stdio")]
    let run = crate::transport::stdio::Section::inherit(run);
    tokio::spawn(run);
    tracing::debug!(task_id = %task_id, "task created");
    Reply::result(
        &request.id,
        server.envelope(ResultType::Task, TaskView::of(&record), None, None),
    )
}

/// The input keys a task shows clients. Each key is used once over the task's life: a
/// question asked again (its answer was invalid) gets a fresh one.
#[derive(Default)]
struct WireKeys {
    asked: HashMap<String, u32>,
    internal: HashMap<String, String>,
    /// Each internal key's latest wire key.
    latest: HashMap<String, String>,
}

impl WireKeys {
    fn assign(&mut self, key: &str) -> String {
        let n = self.asked.entry(key.to_owned()).or_insert(0);
        loop {
            *n += 1;
            let wire = if *n == 1 {
                key.to_owned()
            } else {
                format!("{key}.{n}")
            };
            if !self.internal.contains_key(&wire) {
                self.internal.insert(wire.clone(), key.to_owned());
                self.latest.insert(key.to_owned(), wire.clone());
                return wire;
            }
        }
    }

    fn internal(&self, wire: &str) -> Option<&str> {
        self.internal.get(wire).map(String::as_str)
    }

    /// The wire key `key` was last asked under.
    fn latest(&self, key: &str) -> Option<&str> {
        self.latest.get(key).map(String::as_str)
    }
}

/// Runs one task on the instance that created it.
struct Worker {
    server: Arc<ServerInner>,
    store: Arc<dyn TaskStore>,
    id: String,
    target: String,
    input: Option<Input>,
    cancel: CancellationToken,
    status: mpsc::Receiver<String>,
    keys: WireKeys,
    /// Store failures seen while the task runs: logged at most every [`WARN_EVERY`], with
    /// how many came between (a task reporting progress fast would otherwise flood).
    failures: crate::telemetry::Throttle,
    /// The task renewing the lease ([`renew`]), stopped when the worker ends.
    _renewing: AbortOnDrop,
    _slot: Slot,
}

/// Renews the lease of task `id` every quarter of `lease`, until the task ends or is gone.
async fn renew(store: Arc<dyn TaskStore>, id: String, lease: Duration) {
    let failures = crate::telemetry::Throttle::every(WARN_EVERY);
    let mut tick = tokio::time::interval(lease / 4);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        match store
            .update(&id, TaskChange::Renew(lease_from_now(lease)))
            .await
        {
            Ok(Some(task)) if !task.status().is_terminal() => {}
            Ok(_) => return,
            Err(e) => {
                if let Some(suppressed) = failures.admit() {
                    tracing::warn!(
                        suppressed,
                        "task store: {e}; the task's lease was not renewed"
                    );
                }
            }
        }
    }
}

/// The end of a lease of `lease` taken now (ms since the Unix epoch).
fn lease_from_now(lease: Duration) -> u64 {
    now_ms().saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX))
}

/// The task `id` as it is now: a task whose instance stopped renewing its lease is
/// recorded as failed first ([`TaskChange::Abandon`]), by whichever instance reads it.
/// Every read of a task for a client goes through here.
pub(crate) async fn current(
    store: &dyn TaskStore,
    id: &str,
) -> Result<Option<TaskRecord>, StoreError> {
    match store.get(id).await? {
        Some(task) if task.is_abandoned(now_ms()) => {
            let after = store.update(id, TaskChange::Abandon).await?;
            if after.as_ref().is_some_and(|t| t.status().is_terminal()) {
                tracing::warn!(task_id = %id, "task failed: its instance stopped renewing it");
            }
            Ok(after)
        }
        found => Ok(found),
    }
}

/// How often a running task logs that its store fails.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// Why a worker stopped before the handler returned.
enum Stop {
    /// Cancelled by the client, or already terminal.
    Cancelled,
    /// The task expired (the store forgot it).
    Gone,
    /// The server is shutting down.
    Shutdown,
    /// The store did not take the task's questions, or give its answers, within
    /// [`END_RETRY_FOR`]: the handler would wait for answers that cannot come.
    StoreFailed,
}

impl Worker {
    async fn run(
        mut self,
        handler: Handler<Tool>,
        call: Call<Tool>,
        ttl: Duration,
        mut watch: BoxStream<'static, ()>,
    ) {
        let asked = self.input.as_ref().map(Input::asked);
        let shutdown = self.server.stop_tasks.clone();
        // The task's TTL bounds its run; the guard's timeout is only a backstop.
        let expiry = tokio::time::sleep(ttl);
        tokio::pin!(expiry);
        let backstop = ttl + CANCEL_GRACE + Duration::from_secs(1);
        let mut fut: BoxFuture<'static, Result<Result<CallToolResult, Error>, RpcError>> =
            Box::pin(guarded(backstop, move || handler(call)));
        let end = loop {
            let asked = async {
                match &asked {
                    Some(n) => n.notified().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                out = &mut fut => break Ok(out),
                () = asked => {
                    // A status the handler reported before asking shows with the question.
                    let mut last = None;
                    while let Ok(message) = self.status.try_recv() {
                        last = Some(message);
                    }
                    if let Some(message) = last {
                        self.update(TaskChange::Message(message)).await;
                    }
                    if let Err(stop) = self.publish().await {
                        break Err(stop);
                    }
                }
                Some(message) = self.status.recv() => {
                    self.update(TaskChange::Message(message)).await;
                }
                signal = watch.next() => match signal {
                    None => break Err(Stop::Gone),
                    Some(()) => {
                        if let Err(stop) = self.deliver().await {
                            break Err(stop);
                        }
                    }
                },
                () = shutdown.cancelled() => break Err(Stop::Shutdown),
                () = &mut expiry => break Err(Stop::Gone),
            }
        };
        match end {
            Ok(out) => {
                let change = self.outcome(out);
                self.record_end(change).await;
                tracing::debug!("task finished");
            }
            Err(stop) => {
                // Cooperative: the handler sees its token fire and has a moment to wind
                // down (whatever it returns then is not recorded: the task is terminal),
                // then its future is dropped.
                self.cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut fut).await;
                drop(fut);
                match stop {
                    Stop::Cancelled => tracing::debug!("task cancelled"),
                    Stop::Gone => tracing::debug!("task expired while running"),
                    Stop::Shutdown => {
                        let e = RpcError::internal(
                            "Internal error: the server shut down before the task finished",
                        );
                        self.record_end(TaskChange::Fail(error_json(&e))).await;
                    }
                    Stop::StoreFailed => {
                        let e = RpcError::internal(
                            "Internal error: the task store failed while the task asked for input",
                        );
                        self.record_end(TaskChange::Fail(error_json(&e))).await;
                    }
                }
            }
        }
    }

    /// The change recording how the handler ended: a result (`isError` results included)
    /// completes the task, a JSON-RPC error fails it.
    fn outcome(&self, out: Result<Result<CallToolResult, Error>, RpcError>) -> TaskChange {
        let failed = |e: &RpcError| TaskChange::Fail(error_json(e));
        match out {
            Err(e) => failed(&e),
            Ok(result) => match settle::<Tool>(result, &self.target, false) {
                Outcome::Complete(r) => TaskChange::Complete(result_json(&self.server, &r)),
                Outcome::Failed(rejection) => failed(&rejection.error),
                Outcome::InputRequired(_) | Outcome::Body => failed(&RpcError::internal(
                    "Internal error: the task ended without a result",
                )),
            },
        }
    }

    /// Hands the questions the handler asked to the store, under fresh keys, and withdraws
    /// those it stopped waiting for. Both are taken from the handler once: a store that
    /// fails is tried again (see [`Worker::retrying`]), and one that keeps failing stops
    /// the task.
    async fn publish(&mut self) -> Result<(), Stop> {
        let Some(input) = &self.input else {
            return Ok(());
        };
        // Withdrawn first: a question asked again under the same key gets a new wire key.
        let withdrawn: Vec<String> = input
            .take_withdrawn()
            .iter()
            .filter_map(|key| self.keys.latest(key).map(str::to_owned))
            .collect();
        let asked: BTreeMap<String, Value> = input
            .take_questions()
            .into_iter()
            .map(|(key, request)| (self.keys.assign(&key), request))
            .collect();
        if !withdrawn.is_empty() {
            self.record("its questions", TaskChange::Withdraw(withdrawn))
                .await?;
        }
        if !asked.is_empty() {
            self.record("its questions", TaskChange::Ask(asked)).await?;
        }
        Ok(())
    }

    /// After a change in the store: hands delivered answers to the questions waiting for
    /// them; stops when the task was cancelled or is gone. A store that fails is tried
    /// again (the change that woke this is not told again).
    async fn deliver(&mut self) -> Result<(), Stop> {
        let record = match self
            .retrying("its answers", || self.store.get(&self.id))
            .await
        {
            Ok(Some(r)) => r,
            Ok(None) => return Err(Stop::Gone),
            Err(()) => return Err(Stop::StoreFailed),
        };
        if record.status().is_terminal() {
            return Err(Stop::Cancelled);
        }
        let taken: Vec<String> = record.input_responses().keys().cloned().collect();
        if taken.is_empty() {
            return Ok(());
        }
        if let Some(input) = &self.input {
            for (wire, response) in record.input_responses() {
                if let Some(key) = self.keys.internal(wire) {
                    input.deliver(key, response.clone());
                }
            }
        }
        // Taken out of the store, or a re-asked question would get the old answer again.
        self.record("its answers taken", TaskChange::Take(taken))
            .await
    }

    /// Records `change` while the task runs ([`Worker::retrying`]); stops the task when it
    /// is gone, or when the store keeps failing.
    async fn record(&self, what: &str, change: TaskChange) -> Result<(), Stop> {
        let recorded = self
            .retrying(what, || self.store.update(&self.id, change.clone()))
            .await;
        match recorded {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(Stop::Gone),
            Err(()) => Err(Stop::StoreFailed),
        }
    }

    /// `op` on the store, tried again with a growing pause while it fails, for up to
    /// [`END_RETRY_FOR`] (a backend briefly away); `Err` once that is over (logged).
    /// `what` names what is recorded or read, for the log.
    async fn retrying<T, F>(&self, what: &str, op: impl Fn() -> F) -> Result<T, ()>
    where
        F: std::future::Future<Output = Result<T, StoreError>>,
    {
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let e = match op().await {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            if started.elapsed() + pause > END_RETRY_FOR {
                tracing::error!(
                    "task store: could not record or read {what} within {}s: {e}",
                    END_RETRY_FOR.as_secs()
                );
                return Err(());
            }
            self.store_failed(&e);
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    async fn update(&self, change: TaskChange) {
        if let Err(e) = self.store.update(&self.id, change).await {
            self.store_failed(&e);
        }
    }

    /// Logs a store failure, at most every [`WARN_EVERY`].
    fn store_failed(&self, e: &StoreError) {
        if let Some(suppressed) = self.failures.admit() {
            tracing::warn!(suppressed, "task store: {e}");
        }
    }

    /// Records how the task ended. A store that fails (a backend briefly away) is tried
    /// again, with a growing pause, for up to [`END_RETRY_FOR`]: given up at once, the
    /// result would be lost and the task would show `working` until it expires.
    async fn record_end(&self, change: TaskChange) {
        let recorded = self
            .retrying("how the task ended", || {
                self.store.update(&self.id, change.clone())
            })
            .await;
        if let Ok(Some(task)) = recorded {
            let ended_so = matches!(
                (&change, task.status()),
                (TaskChange::Complete(_), TaskStatus::Completed)
                    | (TaskChange::Fail(_), TaskStatus::Failed)
            );
            if !ended_so {
                tracing::warn!(
                    status = ?task.status(),
                    "the task had ended already (cancelled, or failed as abandoned): how its handler ended is not recorded"
                );
            }
        }
    }
}

/// A JSON-RPC error object, as a failed task carries it.
fn error_json(e: &RpcError) -> Value {
    serde_json::to_value(e).unwrap_or_else(|_| json!({"code": -32603, "message": "Internal error"}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuids_and_keys_are_used_once() {
        let a = new_task_id().unwrap();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert_ne!(a, new_task_id().unwrap());
        let mut k = WireKeys::default();
        assert_eq!(k.assign("confirm"), "confirm");
        assert_eq!(k.assign("confirm"), "confirm.2");
        assert_eq!(k.internal("confirm.2"), Some("confirm"));
        assert_eq!(k.assign("confirm.2"), "confirm.2.2");
    }
}

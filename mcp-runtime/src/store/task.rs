//! Tasks as instances share them: the stored [`TaskRecord`], the [`TaskChange`]s every
//! instance applies to it through [`TaskRecord::apply`] (the one place the status machine
//! lives), the [`TaskStore`] trait, and the in-process [`MemoryTaskStore`].

use crate::protocol::tasks::TaskStatus;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One task as stored: what `tasks/get` shows, plus the answers delivered to it and not yet
/// taken by the instance running it, and the principal it belongs to.
///
/// Stores keep records as they are (they serialize with serde) and change them only
/// through [`TaskRecord::apply`], atomically per task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    id: String,
    status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status_message: Option<String>,
    created_ms: u64,
    updated_ms: u64,
    ttl_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    poll_interval_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    input_requests: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    input_responses: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease_ms: Option<u64>,
}

/// A change to a task. [`TaskRecord::apply`] says what each one does; a task in a terminal
/// status takes none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TaskChange {
    /// The task asks the client for input: these requests (key → `{method, params}`) join
    /// the outstanding ones, and the task is `input_required`.
    Ask(BTreeMap<String, Value>),
    /// The client answered (`tasks/update`): answers to outstanding keys are kept for the
    /// task to take, other keys are ignored; with nothing left outstanding the task is
    /// `working` again.
    Answer(Map<String, Value>),
    /// The running task took these answers.
    Take(Vec<String>),
    /// The task no longer waits for these questions (its handler stopped asking them):
    /// they leave the outstanding ones, with any answer not taken yet; with nothing left
    /// outstanding the task is `working` again.
    Withdraw(Vec<String>),
    /// A new `statusMessage` (progress, while working).
    Message(String),
    /// Finished with this result (`completed`).
    Complete(Value),
    /// Finished with this JSON-RPC error object (`failed`).
    Fail(Value),
    /// Cancelled by the client (`cancelled`).
    Cancel,
    /// The instance running the task vouches for it until this time (ms since the Unix
    /// epoch): its lease, renewed while it runs. Internal bookkeeping: clients see no
    /// change, and watchers are not woken ([`TaskChange::wakes`]).
    Renew(u64),
    /// Whoever reads a task whose lease has run out ([`TaskRecord::is_abandoned`]) records
    /// that its instance stopped: the task fails (`-32603`). No change when the lease was
    /// renewed meanwhile, so a live instance's task is never failed this way.
    Abandon,
}

impl TaskChange {
    /// Whether applying this change wakes the task's watchers ([`TaskStore::watch`]):
    /// every change but a lease's renewal, which nobody waits for.
    pub fn wakes(&self) -> bool {
        !matches!(self, TaskChange::Renew(_))
    }
}

/// The largest integer a JSON number holds exactly (2^53 - 1): the most milliseconds a
/// task's `ttlMs` and `pollIntervalMs` say. A TTL past it would also be an expiry time
/// Redis refuses (`PEXPIREAT` takes at most `i64::MAX`).
const MAX_JSON_INTEGER: u64 = (1 << 53) - 1;

/// What a task abandoned by its instance failed with.
const ABANDONED: &str = "Internal error: the server instance running the task stopped";

impl TaskRecord {
    /// A new `working` task, created now, kept for `ttl` from now. Durations count in
    /// milliseconds, from 1 to 2^53 - 1 (the most a JSON number holds exactly; some
    /// 285,000 years): a longer one (`Duration::MAX` for "for ever") is that.
    pub fn new(
        id: String,
        ttl: Duration,
        poll_interval: Option<Duration>,
        owner: Option<String>,
    ) -> Self {
        let now = now_ms();
        let ms = |d: Duration| {
            u64::try_from(d.as_millis())
                .unwrap_or(u64::MAX)
                .clamp(1, MAX_JSON_INTEGER)
        };
        TaskRecord {
            id,
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: ms(ttl),
            poll_interval_ms: poll_interval.map(ms),
            owner,
            result: None,
            error: None,
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
            lease_ms: None,
        }
    }

    /// The same task, vouched for by its instance until `until_ms` (ms since the Unix
    /// epoch); see [`TaskRecord::is_abandoned`]. A task without a lease (made by an older
    /// version) is never taken for abandoned.
    #[must_use]
    pub fn leased_until(mut self, until_ms: u64) -> Self {
        self.lease_ms = Some(until_ms);
        self
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The status.
    pub fn status(&self) -> TaskStatus {
        self.status
    }
    /// The human-readable `statusMessage`.
    pub fn status_message(&self) -> Option<&str> {
        self.status_message.as_deref()
    }
    /// When it was created (ms since the Unix epoch).
    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }
    /// When its status or message last changed (ms since the Unix epoch).
    pub fn updated_ms(&self) -> u64 {
        self.updated_ms
    }
    /// How long it is kept after creation, in ms.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }
    /// The suggested polling interval, in ms.
    pub fn poll_interval_ms(&self) -> Option<u64> {
        self.poll_interval_ms
    }
    /// The principal it belongs to (`None` without authorization).
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }
    /// The result, once `completed`.
    pub fn result(&self) -> Option<&Value> {
        self.result.as_ref()
    }
    /// The JSON-RPC error, once `failed`.
    pub fn error(&self) -> Option<&Value> {
        self.error.as_ref()
    }
    /// The outstanding input requests (key → `{method, params}`).
    pub fn input_requests(&self) -> &BTreeMap<String, Value> {
        &self.input_requests
    }
    /// Answers delivered and not yet taken by the running task.
    pub fn input_responses(&self) -> &BTreeMap<String, Value> {
        &self.input_responses
    }
    /// When the store may forget it (ms since the Unix epoch).
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }
    /// Whether its TTL has run out at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        now_ms >= self.expires_ms()
    }
    /// Until when the instance running it vouches for it (ms since the Unix epoch).
    pub fn lease_ms(&self) -> Option<u64> {
        self.lease_ms
    }
    /// Whether, at `now_ms`, it is still running by its status but its instance stopped
    /// renewing its lease: the instance died (or lost the store for longer than the lease).
    pub fn is_abandoned(&self, now_ms: u64) -> bool {
        !self.status.is_terminal() && self.lease_ms.is_some_and(|until| now_ms >= until)
    }

    /// Applies `change`; returns whether anything changed. A terminal task never changes.
    pub fn apply(&mut self, change: &TaskChange) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        let changed = match change {
            TaskChange::Ask(requests) => {
                let mut any = false;
                for (k, v) in requests {
                    any |= self.input_requests.insert(k.clone(), v.clone()).is_none();
                }
                if !self.input_requests.is_empty() {
                    self.status = TaskStatus::InputRequired;
                }
                any
            }
            TaskChange::Answer(responses) => {
                let mut any = false;
                for (k, v) in responses {
                    if self.input_requests.remove(k).is_some() {
                        self.input_responses.insert(k.clone(), v.clone());
                        any = true;
                    }
                }
                if any && self.input_requests.is_empty() {
                    self.status = TaskStatus::Working;
                }
                any
            }
            TaskChange::Withdraw(keys) => {
                let mut any = false;
                for k in keys {
                    any |= self.input_requests.remove(k).is_some();
                    self.input_responses.remove(k);
                }
                if any && self.input_requests.is_empty() {
                    self.status = TaskStatus::Working;
                }
                any
            }
            TaskChange::Take(keys) => {
                let before = self.input_responses.len();
                for k in keys {
                    self.input_responses.remove(k);
                }
                // Internal bookkeeping: what clients see does not change.
                return self.input_responses.len() != before;
            }
            TaskChange::Message(m) => {
                let same = self.status_message.as_deref() == Some(m.as_str());
                self.status_message = Some(m.clone());
                !same
            }
            TaskChange::Complete(result) => {
                self.status = TaskStatus::Completed;
                self.result = Some(result.clone());
                self.status_message = None;
                true
            }
            TaskChange::Fail(error) => {
                self.status = TaskStatus::Failed;
                self.status_message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.error = Some(error.clone());
                true
            }
            TaskChange::Cancel => {
                self.status = TaskStatus::Cancelled;
                self.status_message = Some("The task was cancelled.".into());
                true
            }
            TaskChange::Renew(until) => {
                let changed = self.lease_ms != Some(*until);
                self.lease_ms = Some(*until);
                // Internal bookkeeping, like `Take`.
                return changed;
            }
            TaskChange::Abandon => {
                if !self.is_abandoned(now_ms()) {
                    return false;
                }
                self.status = TaskStatus::Failed;
                self.status_message = Some(ABANDONED.into());
                self.error = Some(serde_json::json!({"code": -32603, "message": ABANDONED}));
                true
            }
        };
        if self.status.is_terminal() {
            self.input_requests.clear();
            self.input_responses.clear();
        }
        if changed {
            self.updated_ms = now_ms().max(self.updated_ms);
        }
        changed
    }
}

/// Why a store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// The store holds as many tasks as it may; try again later.
    Full,
    /// The backend failed (connection, serialization, ...).
    Backend(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Full => f.write_str("the store is full"),
            StoreError::Backend(e) => write!(f, "the store failed: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// Where tasks live, shared by every instance serving one server: a task created on one
/// instance is polled, answered and cancelled through any other.
///
/// The instance that created a task runs it; the others reach it only through the store.
/// [`TaskStore::watch`] is how the running instance learns of answers and cancellation,
/// and how listen streams learn of status changes.
///
/// Contract: `update` applies the change with [`TaskRecord::apply`] atomically per task
/// (no lost updates between instances) and returns the record after it; nothing returns a
/// task past its TTL ([`TaskRecord::is_expired`]); `watch` yields after each change to the
/// task that [wakes](TaskChange::wakes) (several may coalesce into one) and ends when the
/// task is gone.
///
/// ```
/// use mcp_runtime::store::{MemoryTaskStore, TaskChange, TaskRecord, TaskStore};
/// use mcp_runtime::protocol::tasks::TaskStatus;
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryTaskStore::new();
/// store.create(TaskRecord::new("t1".into(), Duration::from_secs(60), None, None)).await.unwrap();
/// store.update("t1", TaskChange::Cancel).await.unwrap();
/// let task = store.get("t1").await.unwrap().unwrap();
/// assert_eq!(task.status(), TaskStatus::Cancelled);
/// // Terminal: nothing changes it any more.
/// store.update("t1", TaskChange::Complete(serde_json::json!({}))).await.unwrap();
/// assert_eq!(store.get("t1").await.unwrap().unwrap().status(), TaskStatus::Cancelled);
/// # });
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. When this returns, `get` on any instance finds it.
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>>;
    /// The task, unless it does not exist or has expired.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;
    /// Applies `change` to the task atomically; the record after it, or `None` when the
    /// task does not exist or has expired.
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;
    /// Yields after changes to the task; ends when the task is gone.
    fn watch(&self, id: &str) -> BoxStream<'static, ()>;
    /// Forgets the tasks whose TTL has run out; returns how many.
    fn expire(&self) -> BoxFuture<'_, Result<usize, StoreError>>;
}

/// Default cap on the tasks a [`MemoryTaskStore`] holds.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// Default cap on the size of the tasks a [`MemoryTaskStore`] holds together (their
/// records as JSON, results included).
pub const DEFAULT_MAX_TASK_BYTES: usize = 256 * 1024 * 1024;

/// An in-process [`TaskStore`]: enough for one instance, or for several servers in one
/// process sharing it (`Arc`). Holds at most [`DEFAULT_MAX_TASKS`] tasks (see
/// [`MemoryTaskStore::with_capacity`]) of at most [`DEFAULT_MAX_TASK_BYTES`] together
/// ([`MemoryTaskStore::max_bytes`]); expired ones are swept as new ones arrive.
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, Slot>>,
    max: usize,
    max_bytes: usize,
    last_sweep: Mutex<u64>,
}

struct Slot {
    record: TaskRecord,
    /// The record's size as JSON.
    size: usize,
    changed: watch::Sender<u64>,
}

/// A record's size as JSON.
fn size_of(record: &TaskRecord) -> usize {
    crate::protocol::json::json_len(record)
}

impl MemoryTaskStore {
    /// An empty store holding at most [`DEFAULT_MAX_TASKS`] tasks.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_MAX_TASKS)
    }

    /// An empty store holding at most `max` tasks (at least 1).
    pub fn with_capacity(max: usize) -> Self {
        MemoryTaskStore {
            tasks: Mutex::new(HashMap::new()),
            max: max.max(1),
            max_bytes: DEFAULT_MAX_TASK_BYTES,
            last_sweep: Mutex::new(0),
        }
    }

    /// Holds tasks of at most `max` bytes together, as JSON, results included (at least
    /// 1; default [`DEFAULT_MAX_TASK_BYTES`]). Past it, a new task is refused
    /// ([`StoreError::Full`]: busy) until expired ones make room; a task already held
    /// always keeps its result.
    pub fn max_bytes(mut self, max: usize) -> Self {
        self.max_bytes = max.max(1);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Removes expired tasks (their watchers end); returns how many.
    fn sweep(&self, now: u64) -> usize {
        let mut tasks = self.lock();
        let before = tasks.len();
        tasks.retain(|_, s| !s.record.is_expired(now));
        before - tasks.len()
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: TaskStore + ?Sized> TaskStore for std::sync::Arc<S> {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        (**self).create(task)
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        (**self).get(id)
    }
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        (**self).update(id, change)
    }
    fn watch(&self, id: &str) -> BoxStream<'static, ()> {
        (**self).watch(id)
    }
    fn expire(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        (**self).expire()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        let now = now_ms();
        {
            let mut last = self.last_sweep.lock().unwrap_or_else(|e| e.into_inner());
            if now.saturating_sub(*last) >= 1000 {
                *last = now;
                drop(last);
                self.sweep(now);
            }
        }
        let size = size_of(&task);
        // Full by count, or by the bytes held (results kept for their TTL).
        let full = |tasks: &HashMap<String, Slot>| {
            tasks.len() >= self.max
                || tasks.values().map(|s| s.size).sum::<usize>() + size > self.max_bytes
        };
        let mut tasks = self.lock();
        if full(&tasks) {
            drop(tasks);
            self.sweep(now);
            tasks = self.lock();
            if full(&tasks) {
                return async { Err(StoreError::Full) }.boxed();
            }
        }
        let id = task.id.clone();
        tasks.insert(
            id,
            Slot {
                record: task,
                size,
                changed: watch::channel(0).0,
            },
        );
        async { Ok(()) }.boxed()
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let now = now_ms();
        let mut tasks = self.lock();
        let found = match tasks.get(id) {
            Some(s) if s.record.is_expired(now) => {
                tasks.remove(id);
                None
            }
            Some(s) => Some(s.record.clone()),
            None => None,
        };
        async move { Ok(found) }.boxed()
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let now = now_ms();
        let mut tasks = self.lock();
        let out = match tasks.get_mut(id) {
            Some(s) if s.record.is_expired(now) => {
                tasks.remove(id);
                None
            }
            Some(s) => {
                if s.record.apply(&change) {
                    s.size = size_of(&s.record);
                    if change.wakes() {
                        s.changed.send_modify(|v| *v = v.wrapping_add(1));
                    }
                }
                Some(s.record.clone())
            }
            None => None,
        };
        async move { Ok(out) }.boxed()
    }

    fn watch(&self, id: &str) -> BoxStream<'static, ()> {
        let Some(mut rx) = self.lock().get(id).map(|s| s.changed.subscribe()) else {
            return futures_util::stream::empty().boxed();
        };
        rx.mark_unchanged();
        futures_util::stream::unfold(rx, |mut rx| async move {
            rx.changed().await.ok()?;
            Some(((), rx))
        })
        .boxed()
    }

    fn expire(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        let n = self.sweep(now_ms());
        async move { Ok(n) }.boxed()
    }
}

#[cfg(test)]
mod tests;

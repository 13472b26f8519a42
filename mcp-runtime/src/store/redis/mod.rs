//! Redis back ends for what the instances of a fleet share (the `redis` feature):
//! [`RedisStore`] is a [`HandleStore`](crate::store::HandleStore), a
//! [`ReplayStore`](crate::store::ReplayStore), a [`TaskStore`](crate::store::TaskStore) and a
//! [`NotificationBus`](crate::store::NotificationBus) (with the catalog record late
//! instances catch up from), over one multiplexed connection that reconnects by itself and
//! one pub/sub connection.
//!
//! Keys, all under the prefix (default `mcp`):
//!
//! | key | type | what |
//! |---|---|---|
//! | `{p}:h:{id}` | hash `owner`, `value` | a handle, expiring with it |
//! | `{p}:hz:{owner}` | sorted set | the handle ids of one owner (`-` without authorization), scored by expiry (ms) |
//! | `{p}:handles:ids`, `{p}:handles:sizes`, `{p}:handles:bytes` | sorted set, hash, string | every live handle by expiry, their sizes and their sum: the cap ([`DEFAULT_MAX_HANDLES`](crate::store::DEFAULT_MAX_HANDLES), [`DEFAULT_MAX_HANDLE_BYTES`](crate::store::DEFAULT_MAX_HANDLE_BYTES)) |
//! | `{p}:rs:{id}` | string | a redeemed single-use `requestState`, until it expires |
//! | `{p}:t:{id}` | hash `rec`, `ver` | a task record (JSON) and its version, expiring with it |
//! | `{p}:tw:{id}` | channel | wakes the watchers of a task after a change |
//! | `{p}:tasks:ids`, `{p}:tasks:sizes`, `{p}:tasks:bytes` | sorted set, hash, string | every live task by expiry, their records' sizes and their sum: the cap ([`DEFAULT_MAX_TASKS`](crate::store::DEFAULT_MAX_TASKS), [`DEFAULT_MAX_TASK_BYTES`](crate::store::DEFAULT_MAX_TASK_BYTES)) |
//! | `{p}:bus` | channel | changes, one JSON object per message ([`Change::to_json`]) |
//! | `{p}:catalog` | hash | the latest [`CatalogChange`] per item |
//! | `{p}:catalog:at` | hash | where each of those stands: `<at> <origin>` ([`CatalogChange::order`]) |

mod bus;
mod handles;
mod replay;
mod tasks;

use super::{CatalogChange, Change, StoreError};
use bus::{listen, publish};
use futures_util::FutureExt;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How long one Redis command may take before it fails (and the request that needed it
/// gets an error instead of hanging).
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_secs(2);

/// How often a task watcher checks that its task still exists, and has not changed
/// without a wake-up reaching it (the channel was away).
const WATCH_CHECK: Duration = Duration::from_secs(2);

/// How long a change is retried while Redis is unreachable before it is dropped. A
/// catalog change is never dropped: it is retried until it is recorded (its stamp orders
/// it against the changes others recorded meanwhile), and recorded again after a
/// reconnect should Redis have lost it.
pub const PUBLISH_RETRY_FOR: Duration = Duration::from_secs(30);

/// Most changes waiting to be published (Redis slow or away): past it, a new change is
/// dropped (logged), instead of the queue growing with every change made meanwhile; a
/// catalog change (an item added or removed) waits for room instead.
pub const MAX_UNPUBLISHED: usize = 65_536;

/// Most attempts of one optimistic task update under contention.
const MAX_CAS_ATTEMPTS: usize = 32;

/// A fleet's shared state in Redis. Cheap to clone; clones share the connections.
///
/// ```no_run
/// use mcp_runtime::Server;
/// use mcp_runtime::config::{RequestState, Tasks};
/// use mcp_runtime::store::redis::RedisStore;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = RedisStore::connect("redis://127.0.0.1:6379/").await?;
/// let server = Server::builder("notes", "1.0")
///     .handle_store(redis.clone())
///     .notification_bus(redis.clone())
///     .tasks(Tasks::default().store(redis.clone()))
///     .request_state(RequestState::default().single_use(redis))
///     .build()?;
/// server.serve_http("0.0.0.0:8080").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    conn: Link,
    shared: Arc<Shared>,
    caps: Caps,
}

/// The caps on what a [`RedisStore`] holds, fleet-wide (see [`RedisStore::max_tasks`]).
#[derive(Clone, Copy, Debug)]
struct Caps {
    tasks: usize,
    task_bytes: usize,
    handles: usize,
    handle_bytes: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            tasks: crate::store::DEFAULT_MAX_TASKS,
            task_bytes: crate::store::DEFAULT_MAX_TASK_BYTES,
            handles: crate::store::DEFAULT_MAX_HANDLES,
            handle_bytes: crate::store::DEFAULT_MAX_HANDLE_BYTES,
        }
    }
}

/// The command connection: a [`ConnectionManager`] (which reconnects by itself when the
/// connection breaks), replaced by a new one when a command times out. A connection that
/// went silent without breaking (a failover behind a virtual IP, a balancer or NAT that
/// forgot the flow) is never seen to break: every command on it would time out for ever.
#[derive(Clone)]
struct Link(Arc<LinkInner>);

struct LinkInner {
    client: redis::Client,
    config: ConnectionManagerConfig,
    /// The connection in use, and how many were replaced before it.
    current: Mutex<(u64, ConnectionManager)>,
}

impl Link {
    fn current(&self) -> (u64, ConnectionManager) {
        let c = self.0.current.lock().unwrap_or_else(|e| e.into_inner());
        (c.0, c.1.clone())
    }

    /// After a command on connection `generation`: a timeout replaces that connection
    /// (once, whatever the commands that were waiting on it), and it connects when next
    /// used.
    fn check<T>(&self, generation: u64, r: redis::RedisResult<T>) -> redis::RedisResult<T> {
        if r.as_ref().is_err_and(redis::RedisError::is_timeout) {
            let mut c = self.0.current.lock().unwrap_or_else(|e| e.into_inner());
            if c.0 == generation {
                match ConnectionManager::new_lazy_with_config(
                    self.0.client.clone(),
                    self.0.config.clone(),
                ) {
                    Ok(fresh) => {
                        *c = (generation.wrapping_add(1), fresh);
                        tracing::warn!(
                            "a Redis command timed out; the next go over a new connection"
                        );
                    }
                    Err(e) => {
                        tracing::warn!("could not replace a Redis connection that timed out: {e}")
                    }
                }
            }
        }
        r
    }
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        let (generation, mut conn) = self.current();
        async move {
            let r = conn.req_packed_command(cmd).await;
            self.check(generation, r)
        }
        .boxed()
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        let (generation, mut conn) = self.current();
        async move {
            let r = conn.req_packed_commands(pipeline, offset, count).await;
            self.check(generation, r)
        }
        .boxed()
    }

    fn get_db(&self) -> i64 {
        self.current().1.get_db()
    }
}

struct Shared {
    prefix: String,
    /// Changes read from the bus channel.
    bus: broadcast::Sender<Change>,
    /// Changes to publish, in order, each with when it was made; at most
    /// [`MAX_UNPUBLISHED`].
    outbox: mpsc::Sender<(Change, tokio::time::Instant)>,
    /// Changes dropped because the outbox was full.
    dropped: std::sync::atomic::AtomicU64,
    /// Watchers of tasks on this instance.
    watchers: Mutex<HashMap<String, Weak<watch::Sender<u64>>>>,
    /// The latest catalog change to each item this instance made or was told of, by the
    /// item's field in the record: recorded again after a reconnect, so a record Redis
    /// lost (a restart without persistence) is rebuilt by the instances that hold it.
    /// One entry per item changed at runtime.
    known: Mutex<HashMap<String, CatalogChange>>,
    stop: CancellationToken,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.shared.prefix)
            .field("caps", &self.caps)
            .finish_non_exhaustive()
    }
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl RedisStore {
    /// Connects to `url` (`redis://host:port/db`, `rediss://` for TLS is not built in)
    /// with the key prefix `mcp`.
    pub async fn connect(url: &str) -> Result<RedisStore, StoreError> {
        Self::connect_with_prefix(url, "mcp").await
    }

    /// Holds at most `max` live tasks (at least 1; default
    /// [`DEFAULT_MAX_TASKS`](crate::store::DEFAULT_MAX_TASKS)), as a
    /// [`MemoryTaskStore::with_capacity`](crate::store::MemoryTaskStore::with_capacity)
    /// does. Past it, or past [`max_task_bytes`](Self::max_task_bytes), a new task is
    /// refused ([`StoreError::Full`]: the client is told the server is busy) until expired
    /// ones make room.
    ///
    /// The count is fleet-wide (kept in Redis) and each write checks it against its own
    /// instance's cap: give every instance the same caps. Applies to this value and the
    /// clones made from it afterwards.
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.caps.tasks = max.max(1);
        self
    }

    /// Holds tasks of at most `max` bytes together, as JSON, results included (at least
    /// 1; default [`DEFAULT_MAX_TASK_BYTES`](crate::store::DEFAULT_MAX_TASK_BYTES)). See
    /// [`max_tasks`](Self::max_tasks).
    pub fn max_task_bytes(mut self, max: usize) -> Self {
        self.caps.task_bytes = max.max(1);
        self
    }

    /// Holds at most `max` live handles (at least 1; default
    /// [`DEFAULT_MAX_HANDLES`](crate::store::DEFAULT_MAX_HANDLES)), as a
    /// [`MemoryHandleStore::with_capacity`](crate::store::MemoryHandleStore::with_capacity)
    /// does: past it, or past [`max_handle_bytes`](Self::max_handle_bytes), a new handle
    /// is refused ([`StoreError::Full`]). Fleet-wide, as [`max_tasks`](Self::max_tasks).
    pub fn max_handles(mut self, max: usize) -> Self {
        self.caps.handles = max.max(1);
        self
    }

    /// Holds handle values of at most `max` bytes together, as JSON (at least 1; default
    /// [`DEFAULT_MAX_HANDLE_BYTES`](crate::store::DEFAULT_MAX_HANDLE_BYTES)): past it, a
    /// new handle, or a value that grows, is refused. See [`max_handles`](Self::max_handles).
    pub fn max_handle_bytes(mut self, max: usize) -> Self {
        self.caps.handle_bytes = max.max(1);
        self
    }

    /// Connects with a key prefix of your own (several servers in one Redis).
    pub async fn connect_with_prefix(url: &str, prefix: &str) -> Result<RedisStore, StoreError> {
        let client = redis::Client::open(url).map_err(backend)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(DEFAULT_REDIS_TIMEOUT))
            .set_connection_timeout(Some(DEFAULT_REDIS_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let conn = client
            .get_connection_manager_with_config(config.clone())
            .await
            .map_err(backend)?;
        let conn = Link(Arc::new(LinkInner {
            client: client.clone(),
            config,
            current: Mutex::new((0, conn)),
        }));
        let (outbox, queued) = mpsc::channel(MAX_UNPUBLISHED);
        let shared = Arc::new(Shared {
            prefix: prefix.to_owned(),
            bus: broadcast::channel(1024).0,
            outbox,
            dropped: std::sync::atomic::AtomicU64::new(0),
            watchers: Mutex::new(HashMap::new()),
            known: Mutex::new(HashMap::new()),
            stop: CancellationToken::new(),
        });
        let store = RedisStore {
            conn,
            shared,
            caps: Caps::default(),
        };
        let ready = tokio::sync::oneshot::channel();
        tokio::spawn(listen(
            client,
            store.conn.clone(),
            Arc::downgrade(&store.shared),
            ready.0,
        ));
        tokio::spawn(publish(
            store.conn.clone(),
            store.shared.prefix.clone(),
            Arc::downgrade(&store.shared),
            queued,
            store.shared.stop.clone(),
        ));
        // The subscription is in place before the store is handed out, so nothing
        // published from now on is missed.
        let _ = tokio::time::timeout(DEFAULT_REDIS_TIMEOUT, ready.1).await;
        Ok(store)
    }

    /// Checks that Redis answers (readiness probes).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut c = self.conn.clone();
        redis::cmd("PING")
            .query_async::<String>(&mut c)
            .await
            .map(drop)
            .map_err(backend)
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{id}", self.shared.prefix)
    }

    fn owner_index(&self, owner: Option<&str>) -> String {
        let tag = match owner {
            None => "-".to_owned(),
            Some(o) => Sha256::digest(o.as_bytes())
                .iter()
                .take(12)
                .map(|b| format!("{b:02x}"))
                .collect(),
        };
        self.key("ho", &tag)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

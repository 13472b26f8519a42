//! Redis back ends for what the instances of a fleet share (the `redis` feature):
//! [`RedisStore`] is a [`HandleStore`](crate::store::HandleStore), a
//! [`ReplayStore`](crate::store::ReplayStore), a [`TaskStore`](crate::store::TaskStore) and a
//! [`NotificationBus`] (with the catalog record late instances catch up from), over one
//! multiplexed connection that reconnects by itself and one pub/sub connection.
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

mod handles;
mod replay;
mod tasks;

use super::{CatalogChange, Change, NotificationBus, REPLAYED, StoreError, unmarked};
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
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

/// How often the notification channel and the command connection are pinged: one that
/// went silent without breaking (Redis, or whatever is between, forgot it) would
/// otherwise never be seen to be lost (no change would arrive again; an instance that
/// sends no command would keep a dead connection until it needs one).
const CHANNEL_CHECK: Duration = Duration::from_secs(5);

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

impl Shared {
    /// Keeps `c` as its item's latest catalog change, unless a later one is known. It is
    /// kept as its origin made it (without a replay's mark), so that recording it again
    /// finds the same text recorded, and neither writes nor publishes it.
    fn remember(&self, c: &CatalogChange) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let slot = known.entry(field(c));
        if let std::collections::hash_map::Entry::Occupied(k) = &slot
            && !c.supersedes(k.get())
        {
            return;
        }
        let origin = unmarked(&c.origin).to_owned();
        slot.insert_entry(CatalogChange {
            origin,
            ..c.clone()
        });
    }

    /// Queues a change to publish. A catalog change is never dropped: this instance
    /// applied it already, and the others (and the record) would differ for that item
    /// until its next change. They are few (an item's add or remove): one that finds the
    /// queue full waits for room, on its own, and its stamp orders it against the others.
    fn queue(&self, change: Change) {
        use std::sync::atomic::Ordering::Relaxed;
        let made = tokio::time::Instant::now();
        match self.outbox.try_send((change, made)) {
            Ok(()) => {
                if self.dropped.load(Relaxed) > 0 {
                    let n = self.dropped.swap(0, Relaxed);
                    tracing::warn!(dropped = n, "changes are queued for Redis again");
                }
            }
            Err(mpsc::error::TrySendError::Full(c @ (Change::Catalog(_), _))) => {
                let outbox = self.outbox.clone();
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    rt.spawn(async move {
                        let _ = outbox.send(c).await;
                    });
                }
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                // Logged at the 1st, 2nd, 4th, 8th, ... drop: a flood does not flood the log.
                let n = self.dropped.fetch_add(1, Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(
                        dropped = n,
                        "{MAX_UNPUBLISHED} changes wait to be published to Redis (slow or away): a change was dropped (other instances miss it)"
                    );
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// After a reconnect: every known catalog change is recorded again (the record
    /// script keeps whichever is later, and publishes only what it records anew), then
    /// the record is read and replayed to this instance. `false`: the read failed, to be
    /// tried again.
    async fn catch_up(&self, conn: &Link) -> bool {
        let known: Vec<CatalogChange> = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            known.values().cloned().collect()
        };
        for c in known {
            self.queue(Change::Catalog(c));
        }
        match read_catalog(&mut conn.clone(), &self.prefix).await {
            Ok(all) => {
                for mut c in all {
                    self.remember(&c);
                    // Not the origin's own news any more: each instance applies it, and
                    // tells only if it changed something.
                    c.origin = format!("{REPLAYED}{}", c.origin);
                    let _ = self.bus.send(Change::Catalog(c));
                }
                true
            }
            Err(e) => {
                tracing::warn!("could not re-read the catalog record: {e}; retrying");
                false
            }
        }
    }
}

/// An item's field in the catalog record (and its stamps).
fn field(c: &CatalogChange) -> String {
    format!("{:?}:{}", c.kind, c.name)
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

/// Reads the bus channel and the task wake-ups, reconnecting after a failure.
async fn listen(
    client: redis::Client,
    conn: Link,
    shared: Weak<Shared>,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut delay = Duration::from_millis(50);
    loop {
        let Some((stop, prefix)) = shared.upgrade().map(|s| (s.stop.clone(), s.prefix.clone()))
        else {
            return;
        };
        let bus_channel = format!("{prefix}:bus");
        let wake_prefix = format!("{prefix}:tw:");
        let subscribed = async {
            let mut ps = client.get_async_pubsub().await?;
            ps.subscribe(&bus_channel).await?;
            ps.psubscribe(format!("{wake_prefix}*")).await?;
            Ok::<_, redis::RedisError>(ps)
        };
        let ps = tokio::select! {
            () = stop.cancelled() => return,
            r = tokio::time::timeout(DEFAULT_REDIS_TIMEOUT, subscribed) => r,
        };
        match ps {
            Ok(Ok(ps)) => {
                // The first subscription, in place before `connect` handed the store out,
                // missed nothing. Any other (a reconnect, or a first one that came after
                // `connect` stopped waiting) may have: every watcher looks again, and the
                // catalog is caught up (applying a change twice changes nothing, and
                // nobody is told of a change that did nothing), until that succeeds.
                let mut behind = ready.take().is_none_or(|r| r.send(()).is_err());
                if behind {
                    tracing::info!("(re)connected to the Redis notification channel");
                    if let Some(s) = shared.upgrade() {
                        s.wake_all();
                        // What changed meanwhile was not heard: every listener is told
                        // the lists may have, and lists them again. (A resource's update
                        // missed meanwhile is not told again.)
                        for c in [
                            Change::ToolsListChanged,
                            Change::PromptsListChanged,
                            Change::ResourcesListChanged,
                        ] {
                            let _ = s.bus.send(c);
                        }
                        behind = !s.catch_up(&conn).await;
                    }
                }
                delay = Duration::from_millis(50);
                let (mut sink, mut messages) = ps.split();
                let mut check = tokio::time::interval(CHANNEL_CHECK);
                check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                check.reset();
                loop {
                    let msg = tokio::select! {
                        () = stop.cancelled() => return,
                        m = messages.next() => m,
                        _ = check.tick() => {
                            if behind && let Some(s) = shared.upgrade() {
                                behind = !s.catch_up(&conn).await;
                            }
                            // The command connection too, on its own: one gone silent is
                            // replaced when the ping times out (`Link::check`), even on
                            // an instance nothing else sends a command from.
                            let mut commands = conn.clone();
                            tokio::spawn(async move {
                                let _ = redis::cmd("PING").query_async::<()>(&mut commands).await;
                            });
                            // Messages wait in the connection's buffer meanwhile.
                            let pong = tokio::time::timeout(
                                DEFAULT_REDIS_TIMEOUT,
                                sink.ping::<redis::Value>(),
                            );
                            if matches!(pong.await, Ok(Ok(_))) {
                                continue;
                            }
                            None
                        }
                    };
                    let Some(msg) = msg else { break };
                    let Some(s) = shared.upgrade() else { return };
                    let channel = msg.get_channel_name();
                    if channel == bus_channel {
                        match msg
                            .get_payload::<String>()
                            .map_err(|e| e.to_string())
                            .and_then(|t| Change::from_json(&t))
                        {
                            Ok(change) => {
                                if let Change::Catalog(c) = &change {
                                    s.remember(c);
                                }
                                let _ = s.bus.send(change);
                            }
                            Err(e) => tracing::warn!("ignored a message on the bus: {e}"),
                        }
                    } else if let Some(id) = channel.strip_prefix(&wake_prefix) {
                        s.wake(id);
                    }
                }
                tracing::warn!("lost the Redis notification channel; reconnecting");
            }
            Ok(Err(e)) => tracing::warn!("cannot subscribe to Redis: {e}; retrying"),
            Err(_) => tracing::warn!("subscribing to Redis timed out; retrying"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}

/// Records a catalog change and publishes it, unless the record holds a change to the
/// same item that comes after it ([`CatalogChange::supersedes`]: by stamp, then by origin,
/// compared byte by byte as Rust compares strings): 1 when it went out, or was recorded
/// already, text and stamp (a retry, or a change recorded again after a reconnect: not
/// published twice); otherwise the recorded change's text (nil if there is none). KEYS:
/// the record, its stamps (`<at> <origin>` per item); ARGV: the item's field, the
/// change's text, its stamp, the bus channel, its origin.
static RECORD_CATALOG: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local function after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end
local last = redis.call('HGET', KEYS[2], ARGV[1])
if last == ARGV[3] .. ' ' .. ARGV[5] and redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return 1
end
if last then
  local at, origin = string.match(last, '^(%d+) (.*)$')
  local theirs, mine = tonumber(at or last) or 0, tonumber(ARGV[3])
  if theirs > mine or (theirs == mine and after(origin or '', ARGV[5])) then
    return redis.call('HGET', KEYS[1], ARGV[1])
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. ' ' .. ARGV[5])
redis.call('PUBLISH', ARGV[4], ARGV[2])
return 1",
    )
});

/// Publishes queued changes in order (a catalog change is recorded, then published, by
/// one script: [`RECORD_CATALOG`]). One Redis cannot take is tried again, with a growing
/// pause, until [`PUBLISH_RETRY_FOR`] after it was made (a catalog change: until it is
/// recorded); the ones after it wait their turn. A catalog change the record holds a
/// later one for is not published: the later one goes to this instance's subscribers
/// instead, as a replayed record, so this instance (which applied its own change
/// already) ends where the others are.
async fn publish(
    mut conn: Link,
    prefix: String,
    shared: Weak<Shared>,
    mut queued: mpsc::Receiver<(Change, tokio::time::Instant)>,
    stop: CancellationToken,
) {
    let channel = format!("{prefix}:bus");
    let catalog = format!("{prefix}:catalog");
    let stamps = format!("{prefix}:catalog:at");
    loop {
        let (change, made) = tokio::select! {
            () = stop.cancelled() => return,
            c = queued.recv() => match c {
                Some(c) => c,
                None => return,
            },
        };
        let text = change.to_json();
        let catalog_change = matches!(change, Change::Catalog(_));
        // A change other than a catalog change made longer ago than that (it waited behind
        // others while Redis was away) is dropped, not published late over what others
        // published meanwhile. A catalog change is recorded however late: the record
        // orders it by its stamp.
        let too_old = |by: Duration| !catalog_change && made.elapsed() + by >= PUBLISH_RETRY_FOR;
        let mut pause = Duration::from_millis(100);
        let mut warned = false;
        loop {
            if too_old(Duration::ZERO) {
                tracing::warn!(
                    "could not publish a change to Redis for {}s (other instances miss it)",
                    PUBLISH_RETRY_FOR.as_secs()
                );
                break;
            }
            let sent = match &change {
                Change::Catalog(c) => RECORD_CATALOG
                    .key(&catalog)
                    .key(&stamps)
                    .arg(field(c))
                    .arg(&text)
                    .arg(c.at)
                    .arg(&channel)
                    .arg(unmarked(&c.origin))
                    .invoke_async::<redis::Value>(&mut conn)
                    .await
                    .map(Some),
                _ => redis::cmd("PUBLISH")
                    .arg(&channel)
                    .arg(&text)
                    .query_async::<()>(&mut conn)
                    .await
                    .map(|()| None),
            };
            let e = match sent {
                Ok(None | Some(redis::Value::Int(1))) => break,
                Ok(Some(later)) => {
                    tracing::info!(
                        "a catalog change was not published: another instance changed the item since it was made"
                    );
                    let later = redis::from_redis_value::<Option<String>>(later);
                    if let Ok(Some(Ok(Change::Catalog(mut c)))) =
                        later.map(|t| t.map(|t| Change::from_json(&t)))
                        && let Some(s) = shared.upgrade()
                    {
                        s.remember(&c);
                        c.origin = format!("{REPLAYED}{}", c.origin);
                        let _ = s.bus.send(Change::Catalog(c));
                    }
                    break;
                }
                Err(e) => e,
            };
            if too_old(pause) {
                tracing::warn!(
                    "could not publish a change to Redis for {}s (other instances miss it): {e}",
                    PUBLISH_RETRY_FOR.as_secs()
                );
                break;
            }
            if catalog_change && !warned && made.elapsed() >= PUBLISH_RETRY_FOR {
                warned = true;
                tracing::warn!(
                    "a catalog change waits {}s for Redis (other instances differ until it is recorded): {e}",
                    PUBLISH_RETRY_FOR.as_secs()
                );
            }
            tracing::debug!("could not publish a change to Redis yet: {e}; retrying");
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }
}

/// The latest catalog change per item, as recorded.
async fn read_catalog(conn: &mut Link, prefix: &str) -> Result<Vec<CatalogChange>, StoreError> {
    // Bytes, not text: an entry that is not UTF-8 is skipped as one that is not a change
    // is, instead of failing the whole read.
    let all: HashMap<Vec<u8>, Vec<u8>> = redis::cmd("HGETALL")
        .arg(format!("{prefix}:catalog"))
        .query_async(conn)
        .await
        .map_err(backend)?;
    let mut out: Vec<CatalogChange> = all
        .values()
        .filter_map(|t| match Change::from_json(std::str::from_utf8(t).ok()?) {
            Ok(Change::Catalog(c)) => Some(c),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

impl Shared {
    fn wake(&self, id: &str) {
        let mut w = self.watchers.lock().unwrap_or_else(|e| e.into_inner());
        match w.get(id).and_then(Weak::upgrade) {
            Some(tx) => tx.send_modify(|v| *v = v.wrapping_add(1)),
            None => {
                w.remove(id);
            }
        }
    }

    fn wake_all(&self) {
        let mut w = self.watchers.lock().unwrap_or_else(|e| e.into_inner());
        w.retain(|_, tx| match tx.upgrade() {
            Some(tx) => {
                tx.send_modify(|v| *v = v.wrapping_add(1));
                true
            }
            None => false,
        });
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl NotificationBus for RedisStore {
    fn publish(&self, change: Change) {
        if let Change::Catalog(c) = &change {
            self.shared.remember(c);
        }
        self.shared.queue(change);
    }

    fn subscribe(&self) -> BoxStream<'static, Change> {
        super::bus::changes_of(
            self.shared.bus.subscribe(),
            "a slow subscriber missed changes",
        )
    }

    fn catalog(&self) -> BoxFuture<'_, Result<Vec<CatalogChange>, StoreError>> {
        async move { read_catalog(&mut self.conn.clone(), &self.shared.prefix).await }.boxed()
    }
}

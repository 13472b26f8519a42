//! Redis back ends for what the instances of a fleet share (the `redis` feature):
//! [`RedisStore`] is a [`HandleStore`], a [`ReplayStore`], a [`TaskStore`] and a
//! [`NotificationBus`] (with the catalog record late instances catch up from), over one
//! multiplexed connection that reconnects by itself and one pub/sub connection.
//!
//! Keys, all under the prefix (default `mcp`):
//!
//! | key | type | what |
//! |---|---|---|
//! | `{p}:h:{id}` | hash `owner`, `value` | a handle, expiring with it |
//! | `{p}:ho:{owner}` | set | the handle ids of one owner (`-` without authorization) |
//! | `{p}:rs:{id}` | string | a redeemed single-use `requestState`, until it expires |
//! | `{p}:t:{id}` | hash `rec`, `ver` | a task record (JSON) and its version, expiring with it |
//! | `{p}:tw:{id}` | channel | wakes the watchers of a task after a change |
//! | `{p}:bus` | channel | changes, one JSON object per message ([`Change::to_json`]) |
//! | `{p}:catalog` | hash | the latest [`CatalogChange`] per item |

use super::{
    CatalogChange, Change, HandleRecord, HandleStore, NotificationBus, ReplayStore, StoreError,
    TaskChange, TaskRecord, TaskStore,
};
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How long one Redis command may take before it fails (and the request that needed it
/// gets an error instead of hanging).
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_secs(2);

/// How often a task watcher checks that its task still exists.
const WATCH_CHECK: Duration = Duration::from_secs(2);

/// How long a change is retried while Redis is unreachable before it is dropped.
pub const PUBLISH_RETRY_FOR: Duration = Duration::from_secs(30);

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
    conn: ConnectionManager,
    shared: Arc<Shared>,
}

struct Shared {
    prefix: String,
    /// Changes read from the bus channel.
    bus: broadcast::Sender<Change>,
    /// Changes to publish, in order.
    outbox: mpsc::UnboundedSender<Change>,
    /// Watchers of tasks on this instance.
    watchers: Mutex<HashMap<String, Weak<watch::Sender<u64>>>>,
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

    /// Connects with a key prefix of your own (several servers in one Redis).
    pub async fn connect_with_prefix(url: &str, prefix: &str) -> Result<RedisStore, StoreError> {
        let client = redis::Client::open(url).map_err(backend)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(DEFAULT_REDIS_TIMEOUT))
            .set_connection_timeout(Some(DEFAULT_REDIS_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let conn = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(backend)?;
        let (outbox, queued) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            prefix: prefix.to_owned(),
            bus: broadcast::channel(1024).0,
            outbox,
            watchers: Mutex::new(HashMap::new()),
            stop: CancellationToken::new(),
        });
        let store = RedisStore { conn, shared };
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
    conn: ConnectionManager,
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
                if let Some(r) = ready.take() {
                    let _ = r.send(());
                } else {
                    tracing::info!("reconnected to the Redis notification channel");
                    // Whatever happened meanwhile: every watcher looks again, and the
                    // catalog record is replayed (applying a change twice changes
                    // nothing, and nobody is told of a change that did nothing).
                    if let Some(s) = shared.upgrade() {
                        s.wake_all();
                        match read_catalog(&mut conn.clone(), &prefix).await {
                            Ok(all) => {
                                for mut c in all {
                                    // Not the origin's own news any more: each instance
                                    // applies it, and tells only if it changed something.
                                    c.origin = format!("replayed:{}", c.origin);
                                    let _ = s.bus.send(Change::Catalog(c));
                                }
                            }
                            Err(e) => tracing::warn!("could not re-read the catalog record: {e}"),
                        }
                    }
                }
                delay = Duration::from_millis(50);
                let mut messages = ps.into_on_message();
                loop {
                    let msg = tokio::select! {
                        () = stop.cancelled() => return,
                        m = messages.next() => m,
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

/// Publishes queued changes in order (a catalog change is recorded, then published, in
/// one transaction).
async fn publish(
    mut conn: ConnectionManager,
    prefix: String,
    mut queued: mpsc::UnboundedReceiver<Change>,
    stop: CancellationToken,
) {
    let channel = format!("{prefix}:bus");
    let catalog = format!("{prefix}:catalog");
    loop {
        let change = tokio::select! {
            () = stop.cancelled() => return,
            c = queued.recv() => match c {
                Some(c) => c,
                None => return,
            },
        };
        let text = change.to_json();
        let mut pipe = redis::pipe();
        pipe.atomic();
        if let Change::Catalog(c) = &change {
            let field = format!("{:?}:{}", c.kind, c.name);
            pipe.cmd("HSET")
                .arg(&catalog)
                .arg(field)
                .arg(&text)
                .ignore();
        }
        pipe.cmd("PUBLISH").arg(&channel).arg(&text).ignore();
        if let Err(e) = pipe.query_async::<()>(&mut conn).await {
            tracing::warn!(
                "could not publish a change to Redis (listeners elsewhere miss it): {e}"
            );
        }
    }
}

/// The latest catalog change per item, as recorded.
async fn read_catalog(
    conn: &mut ConnectionManager,
    prefix: &str,
) -> Result<Vec<CatalogChange>, StoreError> {
    let all: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(format!("{prefix}:catalog"))
        .query_async(conn)
        .await
        .map_err(backend)?;
    let mut out: Vec<CatalogChange> = all
        .values()
        .filter_map(|t| match Change::from_json(t) {
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

static INSERT_HANDLE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
redis.call('HSET', KEYS[1], 'value', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'owner', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1",
    )
});

static REPLACE_HANDLE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'value', ARGV[1])
return 1",
    )
});

impl HandleStore for RedisStore {
    fn insert<'a>(
        &'a self,
        id: &'a str,
        record: HandleRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        async move {
            let mut c = self.conn.clone();
            INSERT_HANDLE
                .key(self.key("h", id))
                .key(self.owner_index(record.owner.as_deref()))
                .arg(record.value.to_string())
                .arg(record.owner.as_deref().unwrap_or(""))
                .arg(ms(ttl))
                .arg(id)
                .invoke_async::<i64>(&mut c)
                .await
                .map(drop)
                .map_err(backend)
        }
        .boxed()
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<HandleRecord>, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let (owner, value): (Option<String>, Option<String>) = redis::cmd("HMGET")
                .arg(self.key("h", id))
                .arg("owner")
                .arg("value")
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            let Some(value) = value else { return Ok(None) };
            let value: Value = serde_json::from_str(&value).map_err(backend)?;
            Ok(Some(HandleRecord { owner, value }))
        }
        .boxed()
    }

    fn replace<'a>(&'a self, id: &'a str, value: Value) -> BoxFuture<'a, Result<bool, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            REPLACE_HANDLE
                .key(self.key("h", id))
                .arg(value.to_string())
                .invoke_async::<i64>(&mut c)
                .await
                .map(|n| n == 1)
                .map_err(backend)
        }
        .boxed()
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let key = self.key("h", id);
            let owner: Option<String> = redis::cmd("HGET")
                .arg(&key)
                .arg("owner")
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            let (gone, _): (i64, i64) = redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(&key)
                .cmd("SREM")
                .arg(self.owner_index(owner.as_deref()))
                .arg(id)
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            Ok(gone == 1)
        }
        .boxed()
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<(String, Value)>, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let index = self.owner_index(owner);
            let ids: Vec<String> = redis::cmd("SMEMBERS")
                .arg(&index)
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.cmd("HMGET")
                    .arg(self.key("h", id))
                    .arg("owner")
                    .arg("value");
            }
            let rows: Vec<(Option<String>, Option<String>)> =
                pipe.query_async(&mut c).await.map_err(backend)?;
            let mut out = Vec::new();
            let mut stale = Vec::new();
            for (id, (o, v)) in ids.into_iter().zip(rows) {
                match v {
                    Some(v) if o.as_deref() == owner => {
                        if let Ok(v) = serde_json::from_str(&v) {
                            out.push((id, v));
                        }
                    }
                    Some(_) => {}
                    None => stale.push(id),
                }
            }
            if !stale.is_empty() {
                // Expired handles leave their index entry behind; tidy up.
                let _ = redis::cmd("SREM")
                    .arg(&index)
                    .arg(&stale)
                    .query_async::<i64>(&mut c)
                    .await;
            }
            Ok(out)
        }
        .boxed()
    }
}

impl ReplayStore for RedisStore {
    fn redeem<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let set: Option<String> = redis::cmd("SET")
                .arg(self.key("rs", id))
                .arg(1)
                .arg("NX")
                .arg("PX")
                .arg(ms(ttl))
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            Ok(set.is_some())
        }
        .boxed()
    }
}

static CREATE_TASK: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'rec', ARGV[1], 'ver', 0)
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1",
    )
});

static UPDATE_TASK: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('HGET', KEYS[1], 'ver') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'rec', ARGV[2], 'ver', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return 1",
    )
});

impl RedisStore {
    async fn read_task(&self, id: &str) -> Result<Option<(TaskRecord, String)>, StoreError> {
        let mut c = self.conn.clone();
        let (rec, ver): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.key("t", id))
            .arg("rec")
            .arg("ver")
            .query_async(&mut c)
            .await
            .map_err(backend)?;
        let (Some(rec), Some(ver)) = (rec, ver) else {
            return Ok(None);
        };
        let rec: TaskRecord = serde_json::from_str(&rec).map_err(backend)?;
        if rec.is_expired(super::now_ms()) {
            return Ok(None);
        }
        Ok(Some((rec, ver)))
    }
}

impl TaskStore for RedisStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let text = serde_json::to_string(&task).map_err(backend)?;
            let made: i64 = CREATE_TASK
                .key(self.key("t", task.id()))
                .arg(text)
                .arg(task.expires_ms())
                .invoke_async(&mut c)
                .await
                .map_err(backend)?;
            if made == 1 {
                Ok(())
            } else {
                Err(StoreError::Backend(format!("task `{}` exists", task.id())))
            }
        }
        .boxed()
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        async move { Ok(self.read_task(id).await?.map(|(r, _)| r)) }.boxed()
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        async move {
            for _ in 0..MAX_CAS_ATTEMPTS {
                let Some((mut rec, ver)) = self.read_task(id).await? else {
                    return Ok(None);
                };
                if !rec.apply(&change) {
                    return Ok(Some(rec));
                }
                let next = ver.parse::<u64>().unwrap_or(0).wrapping_add(1).to_string();
                let text = serde_json::to_string(&rec).map_err(backend)?;
                let mut c = self.conn.clone();
                let done: i64 = UPDATE_TASK
                    .key(self.key("t", id))
                    .arg(&ver)
                    .arg(text)
                    .arg(&next)
                    .arg(self.key("tw", id))
                    .invoke_async(&mut c)
                    .await
                    .map_err(backend)?;
                if done == 1 {
                    return Ok(Some(rec));
                }
            }
            Err(StoreError::Backend(format!(
                "task `{id}` changed {MAX_CAS_ATTEMPTS} times while being updated"
            )))
        }
        .boxed()
    }

    fn watch(&self, id: &str) -> BoxStream<'static, ()> {
        let tx = {
            let mut w = self
                .shared
                .watchers
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match w.get(id).and_then(Weak::upgrade) {
                Some(tx) => tx,
                None => {
                    let tx = Arc::new(watch::channel(0u64).0);
                    w.insert(id.to_owned(), Arc::downgrade(&tx));
                    tx
                }
            }
        };
        let mut rx = tx.subscribe();
        rx.mark_unchanged();
        let store = self.clone();
        let id = id.to_owned();
        futures_util::stream::unfold((rx, tx, store, id), |(mut rx, tx, store, id)| async move {
            loop {
                tokio::select! {
                    changed = rx.changed() => {
                        changed.ok()?;
                        return Some(((), (rx, tx, store, id)));
                    }
                    () = tokio::time::sleep(WATCH_CHECK) => {
                        // Ends with the task; a backend error keeps watching.
                        if let Ok(None) = store.read_task(&id).await {
                            return None;
                        }
                    }
                }
            }
        })
        .boxed()
    }

    fn expire(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        // Redis expires tasks itself.
        async { Ok(0) }.boxed()
    }
}

impl NotificationBus for RedisStore {
    fn publish(&self, change: Change) {
        let _ = self.shared.outbox.send(change);
    }

    fn subscribe(&self) -> BoxStream<'static, Change> {
        futures_util::stream::unfold(self.shared.bus.subscribe(), |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(c) => return Some((c, rx)),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(skipped = n, "a slow subscriber missed changes");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }

    fn catalog(&self) -> BoxFuture<'_, Result<Vec<CatalogChange>, StoreError>> {
        async move { read_catalog(&mut self.conn.clone(), &self.shared.prefix).await }.boxed()
    }
}

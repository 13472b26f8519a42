//! `RedisStore` as a [`TaskStore`]: a hash per task (`rec`, `ver`), updated by a Lua
//! compare-and-set on the version (no lost updates between instances), with a wake-up
//! channel per task for watchers.
//!
//! The tasks held are capped as a `MemoryTaskStore`'s are (by default
//! [`DEFAULT_MAX_TASKS`] live tasks, [`DEFAULT_MAX_TASK_BYTES`] of records;
//! [`RedisStore::max_tasks`], [`RedisStore::max_task_bytes`]), fleet-wide: past either, a
//! new task is refused ([`StoreError::Full`]: busy) until expired ones make room.
//! Without a cap one client calling a fast task tool in a loop filled Redis (each
//! finished task keeps its result for its TTL), and under `noeviction` every write then
//! failed, on every instance. The count is kept in three keys (see `BOOKKEEPING`):
//! `{p}:tasks:ids` (a sorted set of the ids by expiry, ms), `{p}:tasks:sizes` (a hash of
//! their records' sizes) and `{p}:tasks:bytes` (the sum).
//!
//! [`DEFAULT_MAX_TASKS`]: crate::store::DEFAULT_MAX_TASKS
//! [`DEFAULT_MAX_TASK_BYTES`]: crate::store::DEFAULT_MAX_TASK_BYTES

use super::{MAX_CAS_ATTEMPTS, RedisStore, WATCH_CHECK, backend};
use crate::store::{StoreError, TaskChange, TaskRecord, TaskStore};
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
use std::sync::{Arc, Weak};
use tokio::sync::watch;

/// Most expired ids one write takes out of the bookkeeping of a capped kind of record: a
/// burst of records expiring together is forgotten over several writes, each bounded,
/// instead of by one that holds Redis up.
const SWEEP_BATCH: usize = 1000;

/// Lua shared by the scripts that keep the bookkeeping of a capped kind of record (tasks,
/// and handles in `handles.rs`): `ids`, a sorted set of the ids held, scored by expiry
/// (ms, Redis's clock); `sizes`, a hash of their sizes (bytes); `total`, the sum of those.
/// What is read there is not trusted: a key of another type is reset, a size or total that
/// is not a count reads as 0, so nothing written there by others fails the store for ever.
pub(super) static BOOKKEEPING: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        r"
local SWEEP_BATCH = {SWEEP_BATCH}
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function count(v)
  local n = tonumber(v)
  if n and n >= 0 and n < 1e15 then return math.floor(n) end
  return 0
end
local function reset_unless(key, kind)
  local t = redis.call('TYPE', key)['ok']
  if t ~= kind and t ~= 'none' then redis.call('DEL', key) end
end
local function books(ids, sizes, total)
  reset_unless(ids, 'zset')
  reset_unless(sizes, 'hash')
  reset_unless(total, 'string')
end
local function add(total, d)
  local v = count(redis.call('GET', total)) + d
  if v < 0 then v = 0 end
  redis.call('SET', total, string.format('%d', v))
end
local function sweep(ids, sizes, total, now)
  books(ids, sizes, total)
  local gone = redis.call('ZRANGEBYSCORE', ids, '-inf', now, 'LIMIT', 0, SWEEP_BATCH)
  if #gone > 0 then
    local freed = 0
    for _, s in ipairs(redis.call('HMGET', sizes, unpack(gone))) do freed = freed + count(s) end
    redis.call('ZREM', ids, unpack(gone))
    redis.call('HDEL', sizes, unpack(gone))
    add(total, -freed)
  end
  if redis.call('ZCARD', ids) == 0 then redis.call('DEL', sizes, total) end
end
local function fits(ids, total, now, max, max_bytes, size, old)
  if redis.call('ZCOUNT', ids, string.format('(%d', now), '+inf') >= max then return false end
  return count(redis.call('GET', total)) - old + size <= max_bytes
end
local function hold(ids, sizes, total, id, expires, size)
  local old = count(redis.call('HGET', sizes, id))
  redis.call('ZADD', ids, expires, id)
  redis.call('HSET', sizes, id, size)
  add(total, size - old)
end
local function resize(sizes, total, id, size, max_bytes)
  reset_unless(sizes, 'hash')
  reset_unless(total, 'string')
  local old = redis.call('HGET', sizes, id)
  if not old then return true end
  old = count(old)
  if size > old and count(redis.call('GET', total)) + size - old > max_bytes then return false end
  redis.call('HSET', sizes, id, size)
  add(total, size - old)
  return true
end
local function release(ids, sizes, total, id)
  books(ids, sizes, total)
  local old = redis.call('HGET', sizes, id)
  redis.call('ZREM', ids, id)
  redis.call('HDEL', sizes, id)
  if old then add(total, -count(old)) end
end
"
    )
});

/// Creates a task unless it exists (0) or the tasks held are at their cap (-1): expired
/// ids are swept from the bookkeeping first. KEYS: the task, the bookkeeping's ids,
/// sizes, total; ARGV: the record, its expiry (ms), its id, the cap on tasks, on bytes.
static CREATE_TASK: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(&format!(
        r"{}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = now_ms()
sweep(KEYS[2], KEYS[3], KEYS[4], now)
local size = #ARGV[1]
if not fits(KEYS[2], KEYS[4], now, tonumber(ARGV[4]), tonumber(ARGV[5]), size, 0) then
  return -1
end
redis.call('HSET', KEYS[1], 'rec', ARGV[1], 'ver', 0)
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
hold(KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[2], size)
return 1",
        *BOOKKEEPING
    ))
});

/// Replaces a task's record while its version is still the one read (1; else 0), and
/// counts its new size (a task held always keeps its result: never refused for size).
/// KEYS: the task, the bookkeeping's sizes, total; ARGV: the version read, the record,
/// the next version, the wake-up channel (empty: none), the task's id.
static UPDATE_TASK: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(&format!(
        r"{}
if redis.call('HGET', KEYS[1], 'ver') ~= ARGV[1] then return 0 end
resize(KEYS[2], KEYS[3], ARGV[5], #ARGV[2], math.huge)
redis.call('HSET', KEYS[1], 'rec', ARGV[2], 'ver', ARGV[3])
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[3]) end
return 1",
        *BOOKKEEPING
    ))
});

impl RedisStore {
    /// The bookkeeping of the tasks held: ids by expiry, sizes, total bytes.
    fn task_books(&self) -> [String; 3] {
        let p = &self.shared.prefix;
        [
            format!("{p}:tasks:ids"),
            format!("{p}:tasks:sizes"),
            format!("{p}:tasks:bytes"),
        ]
    }

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
        if rec.is_expired(crate::store::now_ms()) {
            return Ok(None);
        }
        Ok(Some((rec, ver)))
    }
}

/// A watcher's hold on the wake-up channel of task `id`: the last to let go takes the
/// task out of the map of watched tasks (else it would keep an entry for every task ever
/// watched: only a later change of the task, which an ended one never has, removed it).
struct Held {
    tx: Option<Arc<watch::Sender<u64>>>,
    store: RedisStore,
    id: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Under the lock new watchers take the channel, so none can between the two.
        let mut w = self
            .store
            .shared
            .watchers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        drop(self.tx.take());
        if w.get(&self.id).is_some_and(|tx| tx.strong_count() == 0) {
            w.remove(&self.id);
        }
    }
}

impl TaskStore for RedisStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let text = serde_json::to_string(&task).map_err(backend)?;
            let [ids, sizes, total] = self.task_books();
            let made: i64 = CREATE_TASK
                .key(self.key("t", task.id()))
                .key(ids)
                .key(sizes)
                .key(total)
                .arg(text)
                .arg(task.expires_ms())
                .arg(task.id())
                .arg(self.caps.tasks)
                .arg(self.caps.task_bytes)
                .invoke_async(&mut c)
                .await
                .map_err(backend)?;
            match made {
                1 => Ok(()),
                -1 => Err(StoreError::Full),
                _ => Err(StoreError::Backend(format!("task `{}` exists", task.id()))),
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
                // A lease's renewal wakes nobody.
                let channel = if change.wakes() {
                    self.key("tw", id)
                } else {
                    String::new()
                };
                let mut c = self.conn.clone();
                let [_, sizes, total] = self.task_books();
                let done: i64 = UPDATE_TASK
                    .key(self.key("t", id))
                    .key(sizes)
                    .key(total)
                    .arg(&ver)
                    .arg(text)
                    .arg(&next)
                    .arg(channel)
                    .arg(id)
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
        let held = Held {
            tx: Some(tx),
            store: self.clone(),
            id: id.to_owned(),
        };
        // The version the last check read: a change whose wake-up was missed (the channel
        // was away) is seen at the next check.
        let seen: Option<String> = None;
        futures_util::stream::unfold((rx, held, seen), |(mut rx, held, mut seen)| async move {
            loop {
                tokio::select! {
                    changed = rx.changed() => {
                        changed.ok()?;
                        return Some(((), (rx, held, seen)));
                    }
                    () = tokio::time::sleep(WATCH_CHECK) => {
                        // Ends with the task; a backend error keeps watching.
                        match held.store.read_task(&held.id).await {
                            Ok(None) => return None,
                            Ok(Some((_, ver))) => {
                                let moved = seen.as_ref().is_some_and(|s| *s != ver);
                                seen = Some(ver);
                                if moved {
                                    return Some(((), (rx, held, seen)));
                                }
                            }
                            Err(_) => {}
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A `redis-server` of this test (none when it is not installed): the port, and the
    /// child, killed when dropped.
    struct Child(std::process::Child);

    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn redis() -> Option<(u16, Child)> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .ok()?
            .port();
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let child = Child(child);
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some((port, child));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// A task's entry in the map of watched tasks goes with its last watcher: the map does
    /// not keep one entry for every task ever watched.
    #[tokio::test]
    async fn the_last_watcher_of_a_task_takes_its_entry_out() {
        let Some((port, _redis)) = redis() else {
            eprintln!("skipped: redis-server is not installed");
            return;
        };
        let store = RedisStore::connect(&format!("redis://127.0.0.1:{port}"))
            .await
            .unwrap();
        let task = TaskRecord::new("t".into(), Duration::from_secs(60), None, None);
        store.create(task).await.unwrap();
        let watched = || store.shared.watchers.lock().unwrap().len();
        let mut one = store.watch("t");
        let two = store.watch("t");
        store
            .update("t", TaskChange::Message("m".into()))
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(5), one.next())
            .await
            .unwrap();
        drop(two);
        assert_eq!(watched(), 1, "another watcher still watches");
        drop(one);
        assert_eq!(watched(), 0, "the entry outlived its watchers");
    }
}

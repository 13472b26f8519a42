//! `RedisStore` as a [`NotificationBus`]: changes go out on the channel `{p}:bus`, in
//! order, from a queue (at most [`MAX_UNPUBLISHED`]) that one task publishes; another reads
//! that channel, and the task wake-ups, over the pub/sub connection, reconnecting after a
//! failure. A catalog change is recorded in `{p}:catalog` (its stamp in `{p}:catalog:at`)
//! by the script that publishes it, and late instances catch up from that record.

use super::{
    DEFAULT_REDIS_TIMEOUT, Link, MAX_UNPUBLISHED, PUBLISH_RETRY_FOR, RedisStore, Shared, backend,
};
use crate::store::{CatalogChange, Change, NotificationBus, REPLAYED, StoreError, unmarked};
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
use std::collections::HashMap;
use std::sync::Weak;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often the notification channel and the command connection are pinged: one that
/// went silent without breaking (Redis, or whatever is between, forgot it) would
/// otherwise never be seen to be lost (no change would arrive again; an instance that
/// sends no command would keep a dead connection until it needs one).
const CHANNEL_CHECK: Duration = Duration::from_secs(5);

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

/// Reads the bus channel and the task wake-ups, reconnecting after a failure.
pub(super) async fn listen(
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
pub(super) async fn publish(
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

impl NotificationBus for RedisStore {
    fn publish(&self, change: Change) {
        if let Change::Catalog(c) = &change {
            self.shared.remember(c);
        }
        self.shared.queue(change);
    }

    fn subscribe(&self) -> BoxStream<'static, Change> {
        crate::store::bus::changes_of(
            self.shared.bus.subscribe(),
            "a slow subscriber missed changes",
        )
    }

    fn catalog(&self) -> BoxFuture<'_, Result<Vec<CatalogChange>, StoreError>> {
        async move { read_catalog(&mut self.conn.clone(), &self.shared.prefix).await }.boxed()
    }
}

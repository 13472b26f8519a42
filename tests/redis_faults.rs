//! `RedisStore` when Redis misbehaves in ways a clean outage does not show: a connection
//! that goes silent without being closed (a failover behind a virtual IP, a balancer or
//! NAT that forgets the flow), Redis too slow while an instance starts, entries in the
//! framework's keys that are not what it wrote. Each test runs its own `redis-server`
//! (and, where a silent connection is needed, a TCP relay in front of it).
//!
//! Needs `redis-server` (Debian package); skipped when missing, unless
//! `MCP_FLEET=required`.

#[path = "common/fleet.rs"]
mod fleet;

use futures_util::StreamExt;
use mcp_runtime::store::redis::RedisStore;
use mcp_runtime::store::{
    CatalogChange, CatalogOp, Change, HandleRecord, HandleStore, ItemKind, NotificationBus,
};
use mcp_runtime::testing::TestClient;
use mcp_runtime::{Server, tool, tools};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn redis_available() -> bool {
    fleet::available(&["redis-server"])
}

/// Sends one command to the Redis on `port` over a connection of its own; its reply's
/// first line.
fn command(port: u16, args: &[&[u8]]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    s.write_all(&out).unwrap();
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while !line.ends_with(b"\r\n") && s.read(&mut b).unwrap_or(0) == 1 {
        line.push(b[0]);
    }
    String::from_utf8_lossy(&line).trim_end().to_owned()
}

/// A TCP relay to a port of 127.0.0.1. [`Relay::go_silent`] makes every connection open
/// so far silent: kept open, what either side sends dropped (a peer gone without a FIN or
/// RST); connections made after it are relayed as before.
struct Relay {
    port: u16,
    /// Connections opened before this generation are silent.
    generation: Arc<Mutex<u64>>,
}

impl Relay {
    fn start(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let generation = Arc::new(Mutex::new(0u64));
        let current = Arc::clone(&generation);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let born = *current.lock().unwrap();
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let pairs = [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ];
                for (mut from, mut to) in pairs {
                    let current = Arc::clone(&current);
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        loop {
                            let n = match from.read(&mut buf) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => n,
                            };
                            if *current.lock().unwrap() != born {
                                continue;
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    });
                }
            }
        });
        Relay { port, generation }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn go_silent(&self) {
        *self.generation.lock().unwrap() += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_gone_silent_is_replaced_not_timed_out_forever() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let relay = Relay::start(redis.port);
    let store = RedisStore::connect(&relay.url()).await.unwrap();
    let id = "h_AAAAAAAAAAAAAAAAAAAAAA";
    let record = HandleRecord {
        owner: None,
        value: json!("kept"),
    };
    store
        .insert(id, record.clone(), Duration::from_secs(60))
        .await
        .unwrap();
    relay.go_silent();
    // Each command fails within its timeout; a new connection (which works) is made
    // soon, instead of every command timing out on the silent one for ever.
    let t = Instant::now();
    let mut back = None;
    while t.elapsed() < Duration::from_secs(20) {
        let started = Instant::now();
        let r = HandleStore::get(&store, id).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "one read took {:?}",
            started.elapsed()
        );
        if let Ok(found) = r {
            back = Some(found);
            break;
        }
    }
    assert_eq!(
        back,
        Some(Some(record)),
        "no read succeeded within 20 s of the connection going silent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_channel_gone_silent_is_resubscribed() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let relay = Relay::start(redis.port);
    let direct = RedisStore::connect(&redis.url()).await.unwrap();
    let relayed = RedisStore::connect(&relay.url()).await.unwrap();
    let mut seen = relayed.subscribe();
    direct.publish(Change::ToolsListChanged);
    let first = tokio::time::timeout(Duration::from_secs(5), seen.next()).await;
    assert_eq!(first.ok().flatten(), Some(Change::ToolsListChanged));
    // The subscriber's connection goes silent (Redis, told of nothing, keeps sending to
    // it); nothing but the channel is used on that instance meanwhile.
    relay.go_silent();
    let t = Instant::now();
    let mut got = None;
    let mut n = 0;
    while t.elapsed() < Duration::from_secs(20) && got.is_none() {
        n += 1;
        direct.publish(Change::ResourceUpdated(format!("notes://{n}")));
        got = tokio::time::timeout(Duration::from_secs(1), seen.next())
            .await
            .ok()
            .flatten();
    }
    assert!(
        matches!(got, Some(Change::ResourceUpdated(_))),
        "nothing published in the 20 s after the channel went silent arrived: {got:?}"
    );
}

/// Says hi.
#[tool]
async fn hi() -> &'static str {
    "hi"
}

/// Reports.
#[tool]
async fn report() -> &'static str {
    "report"
}

async fn tool_names(client: &TestClient) -> Vec<String> {
    let (list, _) = client.request("tools/list", json!({})).await.unwrap();
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_could_not_read_the_catalog_record_at_start_catches_up_later() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    // Another instance switched `report` on; the record holds it.
    let other = RedisStore::connect(&redis.url()).await.unwrap();
    let on = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "other");
    other.publish(Change::Catalog(on.clone()));
    let t = Instant::now();
    while !other.catalog().await.unwrap().contains(&on) {
        assert!(t.elapsed() < Duration::from_secs(5), "recorded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // This instance starts while Redis does not answer for 3 s (longer than a command
    // may take): its first read of the record fails.
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    assert_eq!(
        command(redis.port, &[b"CLIENT", b"PAUSE", b"3000", b"ALL"]),
        "+OK"
    );
    let server = Server::builder("x", "1")
        .tools(tools![hi])
        .standby_tools(tools![report])
        .notification_bus(store)
        .build()
        .unwrap();
    let client = TestClient::new(server);
    // Once Redis answers again, it catches up (before, it never did: it went on without
    // `report`, unlike every other instance, and said it was ready).
    let t = Instant::now();
    loop {
        let names = tool_names(&client).await;
        if names.iter().any(|n| n == "report") {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "still without `report` 15 s after it started: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_of_the_catalog_record_that_is_not_text_is_skipped_like_one_that_is_not_json() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    let on = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "other");
    store.publish(Change::Catalog(on.clone()));
    let t = Instant::now();
    while !store.catalog().await.unwrap().contains(&on) {
        assert!(t.elapsed() < Duration::from_secs(5), "recorded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (field, value) in [
        (&b"Tool:junk"[..], &b"not json"[..]),
        (b"Tool:bytes", b"\xff\xfe"),
    ] {
        assert_eq!(
            command(redis.port, &[b"HSET", b"mcp:catalog", field, value]),
            ":1"
        );
    }
    // Before, one entry that was not UTF-8 failed the whole read: a starting instance
    // could not catch up, nor a reconnected one.
    let read = store.catalog().await;
    assert_eq!(read, Ok(vec![on]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_entries_do_not_fail_the_listing_of_the_readable_handles() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    let good = "h_GGGGGGGGGGGGGGGGGGGGGG";
    let record = HandleRecord {
        owner: None,
        value: json!({"n": 1}),
    };
    store
        .insert(good, record, Duration::from_secs(60))
        .await
        .unwrap();
    // In the index of the handles without owner: an id that is not UTF-8, one whose
    // record's value is not UTF-8, one whose key holds a list.
    let bytes = b"h_BBBBBBBBBBBBBBBBBBBBBB";
    let list = b"h_LLLLLLLLLLLLLLLLLLLLLL";
    for args in [
        &[&b"SADD"[..], b"mcp:ho:-", b"h_\xff\xfe"][..],
        &[b"SADD", b"mcp:ho:-", bytes],
        &[
            b"HSET",
            b"mcp:h:h_BBBBBBBBBBBBBBBBBBBBBB",
            b"value",
            b"\xff\xfe",
        ],
        &[b"SADD", b"mcp:ho:-", list],
        &[b"RPUSH", b"mcp:h:h_LLLLLLLLLLLLLLLLLLLLLL", b"x"],
    ] {
        assert!(command(redis.port, args).starts_with(':'));
    }
    // Before, any one of them failed the whole listing (for every caller, without
    // authorization).
    let listed = HandleStore::list(&store, None).await;
    assert_eq!(listed, Ok(vec![(good.to_owned(), json!({"n": 1}))]));
}

/// `INFO <section>` of the Redis on `port`, whole.
fn info(port: u16, section: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("INFO {section}\r\n").as_bytes())
        .unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    // `$<length>\r\n<text>\r\n`
    loop {
        let n = s.read(&mut chunk).unwrap_or(0);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&got);
        if let Some((len, rest)) = text.strip_prefix('$').and_then(|t| t.split_once("\r\n"))
            && let Ok(len) = len.parse::<usize>()
            && rest.len() >= len
        {
            return rest[..len].to_owned();
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// How many `PUBLISH` commands the Redis on `port` has run.
fn publishes(port: u16) -> u64 {
    info(port, "commandstats")
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_publish:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

/// Changes made while Redis cannot take them wait in a bounded queue: past
/// `MAX_UNPUBLISHED`, a new change is dropped (and logged), instead of the queue (memory)
/// growing with every change made meanwhile. Once Redis takes commands again, what
/// waited is published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_waiting_for_redis_are_bounded() {
    use mcp_runtime::store::redis::MAX_UNPUBLISHED;
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    // Writes (PUBLISH among them) wait for 4 s.
    assert_eq!(
        command(redis.port, &[b"CLIENT", b"PAUSE", b"4000", b"WRITE"]),
        "+OK"
    );
    let made = MAX_UNPUBLISHED + 5_000;
    for n in 0..made {
        store.publish(Change::ResourceUpdated(format!("notes://{n}")));
    }
    // A catalog change made while the queue is full is not dropped: it waits for room.
    let late = CatalogChange::new(ItemKind::Tool, "late", CatalogOp::Added, "here");
    store.publish(Change::Catalog(late));
    // Published once Redis takes them: until the count stops growing.
    let t = Instant::now();
    let mut last = (u64::MAX, Instant::now());
    while t.elapsed() < Duration::from_secs(40) {
        let now = publishes(redis.port);
        if now != last.0 {
            last = (now, Instant::now());
        } else if last.1.elapsed() > Duration::from_secs(2) && t.elapsed() > Duration::from_secs(5)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let published = last.0;
    // The one the publisher held when the queue filled, the catalog change, and retries
    // of a command that timed out while Redis paused (Redis runs it when the pause ends)
    // may add a few. (Fewer than the queue held only when publishing them took the 30 s a
    // change is retried for: a machine far slower than this one.)
    assert!(
        published > MAX_UNPUBLISHED as u64 / 2 && published <= MAX_UNPUBLISHED as u64 + 20,
        "{published} of {made} changes published; at most {MAX_UNPUBLISHED} may wait"
    );
    assert_eq!(
        command(redis.port, &[b"HEXISTS", b"mcp:catalog", b"Tool:late"]),
        ":1",
        "the catalog change made while the queue was full was dropped"
    );
}

/// Redis restarted without persistence (here: `FLUSHALL`, then the notification channels
/// dropped, as a restart drops them) loses the catalog record. The instances that hold
/// its changes record them again when they reconnect, so an instance started afterwards
/// still serves what the fleet serves. Before, the record stayed empty: the new instance
/// served the catalog it was built with, unlike the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catalog_record_redis_lost_is_recorded_again_by_the_instances_that_hold_it() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    let on = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "a");
    store.publish(Change::Catalog(on.clone()));
    let recorded = |store: RedisStore, on: CatalogChange, what: &'static str| async move {
        let t = Instant::now();
        while !store.catalog().await.unwrap_or_default().contains(&on) {
            assert!(t.elapsed() < Duration::from_secs(15), "{what}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    recorded(store.clone(), on.clone(), "recorded").await;
    assert_eq!(command(redis.port, &[b"FLUSHALL"]), "+OK");
    assert_eq!(store.catalog().await, Ok(vec![]));
    command(redis.port, &[b"CLIENT", b"KILL", b"TYPE", b"pubsub"]);
    recorded(
        store.clone(),
        on.clone(),
        "recorded again after the reconnect",
    )
    .await;

    let late = RedisStore::connect(&redis.url()).await.unwrap();
    let server = Server::builder("x", "1")
        .tools(tools![hi])
        .standby_tools(tools![report])
        .notification_bus(late)
        .build()
        .unwrap();
    let client = TestClient::new(server);
    let t = Instant::now();
    while !tool_names(&client).await.iter().any(|n| n == "report") {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the late instance serves `report`"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A catalog change an instance never heard of on the bus (it fell behind, or the message
/// was lost while its channel was away) is applied when it next reads the record (every
/// 10 s). Here the change is written to the record without being published. Before, an
/// instance read the record only at start and on a reconnect, so it served another
/// catalog than the fleet until that item changed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catalog_change_missed_on_the_bus_is_applied_from_the_record() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    let server = Server::builder("x", "1")
        .tools(tools![hi])
        .standby_tools(tools![report])
        .notification_bus(store)
        .build()
        .unwrap();
    let client = TestClient::new(server);
    assert!(!tool_names(&client).await.iter().any(|n| n == "report"));
    // Let the instance catch up with the (empty) record first.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let on = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "other");
    let text = Change::Catalog(on.clone()).to_json();
    let stamp = format!("{} other", on.at);
    command(
        redis.port,
        &[b"HSET", b"mcp:catalog", b"Tool:report", text.as_bytes()],
    );
    command(
        redis.port,
        &[b"HSET", b"mcp:catalog:at", b"Tool:report", stamp.as_bytes()],
    );
    let t = Instant::now();
    while !tool_names(&client).await.iter().any(|n| n == "report") {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "`report` not served 20 s after it was recorded"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A task changed while its wake-up was lost (the notification channel was away; here
/// the change is written without being published) still wakes its watcher, at its next
/// check (every 2 s). Before, the check only looked whether the task still existed, so the
/// watcher (a worker waiting for an answer or a cancel) slept until the task's TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_change_whose_wake_up_was_lost_still_wakes_its_watcher() {
    use mcp_runtime::store::{TaskRecord, TaskStore};
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    let task = TaskRecord::new("quiet".into(), Duration::from_secs(60), None, None);
    store.create(task).await.unwrap();
    let mut watch = store.watch("quiet");
    // Two checks see the version as it was: no wake-up.
    assert!(
        tokio::time::timeout(Duration::from_millis(4500), watch.next())
            .await
            .is_err(),
        "woken with nothing changed"
    );
    command(redis.port, &[b"HSET", b"mcp:t:quiet", b"ver", b"7"]);
    tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("woken within 5 s of a change that was not published")
        .expect("still watching");
}

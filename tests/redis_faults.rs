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
    let mut told = Vec::new();
    let mut n = 0;
    while t.elapsed() < Duration::from_secs(20) && got.is_none() {
        n += 1;
        direct.publish(Change::ResourceUpdated(format!("notes://{n}")));
        while let Ok(Some(c)) = tokio::time::timeout(Duration::from_secs(1), seen.next()).await {
            if let Change::ResourceUpdated(_) = c {
                got = Some(c);
                break;
            }
            told.push(c);
        }
    }
    assert!(
        matches!(got, Some(Change::ResourceUpdated(_))),
        "nothing published in the 20 s after the channel went silent arrived: {got:?}"
    );
    // What changed while it was away was not heard: its listeners are told the lists may
    // have changed, so they list them again.
    assert_eq!(
        told,
        [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged
        ],
        "told on the reconnect"
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

/// An instance serving `hi`, with `report` on standby, sharing `store`.
fn instance(store: RedisStore) -> TestClient {
    let server = Server::builder("x", "1")
        .tools(tools![hi])
        .standby_tools(tools![report])
        .notification_bus(store)
        .build()
        .unwrap();
    TestClient::new(server)
}

/// Waits until `client`'s instance serves `report`, failing with `what` after `secs`.
async fn serves_report_within(client: &TestClient, secs: u64, what: &str) {
    let t = Instant::now();
    loop {
        let names = tool_names(client).await;
        if names.iter().any(|n| n == "report") {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(secs), "{what}: {names:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
    let client = instance(store);
    // Once Redis answers again, it catches up (before, it never did: it went on without
    // `report`, unlike every other instance, and said it was ready).
    serves_report_within(&client, 15, "still without `report` 15 s after it started").await;
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
    // (The index is a sorted set of the ids by expiry: these expire in 3000 years.)
    let later = b"99999999999999";
    for args in [
        &[&b"ZADD"[..], b"mcp:hz:-", later, b"h_\xff\xfe"][..],
        &[b"ZADD", b"mcp:hz:-", later, bytes],
        &[
            b"HSET",
            b"mcp:h:h_BBBBBBBBBBBBBBBBBBBBBB",
            b"value",
            b"\xff\xfe",
        ],
        &[b"ZADD", b"mcp:hz:-", later, list],
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

    let late = instance(RedisStore::connect(&redis.url()).await.unwrap());
    serves_report_within(&late, 10, "the late instance serves `report`").await;
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
    let client = instance(RedisStore::connect(&redis.url()).await.unwrap());
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
    serves_report_within(
        &client,
        20,
        "`report` not served 20 s after it was recorded",
    )
    .await;
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

/// Sends one command of many arguments (see [`command`]).
fn command_of(port: u16, args: &[Vec<u8>]) -> String {
    let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    command(port, &args)
}

/// `<command> <key>` then, for each of `ids`, `<value> <id>` (or `<id> <value>` when
/// `value_first` is false): seeds a sorted set or a hash in one command.
fn seed(port: u16, cmd: &str, key: &str, ids: &[String], value: &str, value_first: bool) {
    let mut args = vec![cmd.as_bytes().to_vec(), key.as_bytes().to_vec()];
    for id in ids {
        let (a, b) = if value_first {
            (value, id.as_str())
        } else {
            (id.as_str(), value)
        };
        args.push(a.as_bytes().to_vec());
        args.push(b.as_bytes().to_vec());
    }
    let reply = command_of(port, &args);
    assert!(reply.starts_with(':'), "{cmd} {key}: {reply}");
}

/// The reply of `<cmd> <key>` read as an integer (`ZCARD`, `GET` of a count, ...).
fn integer(port: u16, cmd: &str, key: &str) -> i64 {
    let reply = command(port, &[cmd.as_bytes(), key.as_bytes()]);
    if let Some(n) = reply.strip_prefix(':') {
        return n.parse().unwrap();
    }
    // A bulk string: `$<len>`, then the text on the next line; read it again whole.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("{cmd} {key}\r\n").as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 256];
    while got.iter().filter(|b| **b == b'\n').count() < 2 {
        let n = s.read(&mut chunk).unwrap_or(0);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    text.lines()
        .nth(1)
        .unwrap_or("0")
        .trim()
        .parse()
        .unwrap_or(0)
}

/// Redis holds tasks as a `MemoryTaskStore` does, fleet-wide: at most `DEFAULT_MAX_TASKS`
/// live ones (then `StoreError::Full`, busy), and expired ones make room (their ids are
/// swept out of the count as tasks are created). Before, one client calling a fast task
/// tool in a loop filled Redis, each finished task keeping its result for its TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_in_redis_are_capped_like_in_memory() {
    use mcp_runtime::store::{DEFAULT_MAX_TASKS, StoreError, TaskChange, TaskRecord, TaskStore};
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    // 5000 tasks that expired already, as the count holds them until a create sweeps
    // them out.
    let expired: Vec<String> = (0..5000).map(|i| format!("old{i}")).collect();
    seed(redis.port, "ZADD", "mcp:tasks:ids", &expired, "1", true);
    seed(
        redis.port,
        "HSET",
        "mcp:tasks:sizes",
        &expired,
        "100",
        false,
    );
    command(redis.port, &[b"SET", b"mcp:tasks:bytes", b"500000"]);
    let started = Instant::now();
    let made: Vec<_> = futures_util::stream::iter(0..DEFAULT_MAX_TASKS)
        .map(|i| {
            let store = store.clone();
            async move {
                let task = TaskRecord::new(format!("t{i}"), Duration::from_secs(60), None, None);
                store.create(task).await
            }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    eprintln!(
        "{DEFAULT_MAX_TASKS} tasks created in {:?}",
        started.elapsed()
    );
    assert!(made.iter().all(Result::is_ok), "the expired ones made room");
    let one_more = TaskRecord::new("past".into(), Duration::from_secs(60), None, None);
    assert_eq!(store.create(one_more).await, Err(StoreError::Full));
    assert_eq!(
        integer(redis.port, "ZCARD", "mcp:tasks:ids"),
        DEFAULT_MAX_TASKS as i64,
        "expired ids swept out of the count"
    );
    // A task held keeps its result (its size counted), the cap notwithstanding.
    let before = integer(redis.port, "GET", "mcp:tasks:bytes");
    let result = json!({"content": [{"type": "text", "text": "x".repeat(1000)}]});
    let done = store.update("t0", TaskChange::Complete(result)).await;
    assert!(matches!(done, Ok(Some(_))), "{done:?}");
    assert!(integer(redis.port, "GET", "mcp:tasks:bytes") >= before + 1000);

    // By bytes (another prefix): a task one byte bigger than the room left does not
    // fit; one of the exact size does.
    use mcp_runtime::store::DEFAULT_MAX_TASK_BYTES;
    let other = RedisStore::connect_with_prefix(&redis.url(), "b")
        .await
        .unwrap();
    let task = || TaskRecord::new("small".into(), Duration::from_secs(60), None, None);
    let size = serde_json::to_string(&task()).unwrap().len();
    let held = (DEFAULT_MAX_TASK_BYTES - size + 1).to_string();
    seed(
        redis.port,
        "ZADD",
        "b:tasks:ids",
        &["big".into()],
        "99999999999999",
        true,
    );
    seed(
        redis.port,
        "HSET",
        "b:tasks:sizes",
        &["big".into()],
        &held,
        false,
    );
    command(redis.port, &[b"SET", b"b:tasks:bytes", held.as_bytes()]);
    assert_eq!(other.create(task()).await, Err(StoreError::Full));
    let held = (DEFAULT_MAX_TASK_BYTES - size).to_string();
    command(redis.port, &[b"SET", b"b:tasks:bytes", held.as_bytes()]);
    assert_eq!(other.create(task()).await, Ok(()));
    assert_eq!(
        integer(redis.port, "GET", "b:tasks:bytes"),
        DEFAULT_MAX_TASK_BYTES as i64
    );
}

/// Redis holds handles as a `MemoryHandleStore` does, fleet-wide: at most
/// `DEFAULT_MAX_HANDLES` live ones and `DEFAULT_MAX_HANDLE_BYTES` of values (then
/// `StoreError::Full`, for a new handle or a value that grows); a handle removed or
/// expired makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handles_in_redis_are_capped_like_in_memory() {
    use mcp_runtime::store::{DEFAULT_MAX_HANDLE_BYTES, DEFAULT_MAX_HANDLES, StoreError};
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    let record = |v: serde_json::Value| HandleRecord {
        owner: None,
        value: v,
    };
    let ttl = Duration::from_secs(60);
    // One short of the cap: live handles (their records aside) as the count holds them.
    let live: Vec<String> = (1..DEFAULT_MAX_HANDLES).map(|i| format!("g{i}")).collect();
    seed(
        redis.port,
        "ZADD",
        "mcp:handles:ids",
        &live,
        "99999999999999",
        true,
    );
    let first = "h_FFFFFFFFFFFFFFFFFFFFFF";
    let second = "h_SSSSSSSSSSSSSSSSSSSSSS";
    store.insert(first, record(json!(1)), ttl).await.unwrap();
    assert_eq!(
        store.insert(second, record(json!(2)), ttl).await,
        Err(StoreError::Full)
    );
    // A removed handle gives its place back.
    assert_eq!(HandleStore::remove(&store, first).await, Ok(true));
    store.insert(second, record(json!(2)), ttl).await.unwrap();
    assert_eq!(
        store.insert(first, record(json!(1)), ttl).await,
        Err(StoreError::Full)
    );
    // So do expired ones.
    seed(
        redis.port,
        "ZADD",
        "mcp:handles:ids",
        &live[..10],
        "1",
        true,
    );
    store.insert(first, record(json!(1)), ttl).await.unwrap();
    assert_eq!(
        integer(redis.port, "ZCARD", "mcp:handles:ids"),
        DEFAULT_MAX_HANDLES as i64 - 9
    );

    // By bytes (another prefix): 100 bytes short of the cap.
    let other = RedisStore::connect_with_prefix(&redis.url(), "b")
        .await
        .unwrap();
    let big = (DEFAULT_MAX_HANDLE_BYTES - 100).to_string();
    seed(
        redis.port,
        "ZADD",
        "b:handles:ids",
        &["big".into()],
        "99999999999999",
        true,
    );
    seed(
        redis.port,
        "HSET",
        "b:handles:sizes",
        &["big".into()],
        &big,
        false,
    );
    command(redis.port, &[b"SET", b"b:handles:bytes", big.as_bytes()]);
    // 52 bytes of JSON each.
    let fifty = || json!("x".repeat(50));
    other.insert(first, record(fifty()), ttl).await.unwrap();
    assert_eq!(
        other.insert(second, record(fifty()), ttl).await,
        Err(StoreError::Full)
    );
    // A value that grows past the cap is refused; one that shrinks is taken.
    let hundred = json!("x".repeat(100));
    assert_eq!(
        other.replace(first, hundred.clone()).await,
        Err(StoreError::Full)
    );
    assert_eq!(
        other.replace_if(first, &fifty(), hundred).await,
        Err(StoreError::Full)
    );
    assert_eq!(other.replace(first, json!("x")).await, Ok(true));
    assert_eq!(
        integer(redis.port, "GET", "b:handles:bytes"),
        (DEFAULT_MAX_HANDLE_BYTES - 100 + 3) as i64
    );
    other.insert(second, record(fifty()), ttl).await.unwrap();
    assert_eq!(HandleStore::remove(&other, second).await, Ok(true));
    assert_eq!(
        integer(redis.port, "GET", "b:handles:bytes"),
        (DEFAULT_MAX_HANDLE_BYTES - 100 + 3) as i64
    );
}

/// The caps are the store's to set (`max_tasks`, `max_task_bytes`, `max_handles`,
/// `max_handle_bytes`), and a clone keeps them: a fleet holding more than the defaults
/// (or less) says so on each instance. Before, the defaults were fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_caps_are_configurable() {
    use mcp_runtime::store::{StoreError, TaskRecord, TaskStore};
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url())
        .await
        .unwrap()
        .max_tasks(3)
        .max_handles(2)
        .max_handle_bytes(20);
    let task = |id: &str| TaskRecord::new(id.into(), Duration::from_secs(60), None, None);
    for i in 0..3 {
        store.create(task(&format!("t{i}"))).await.unwrap();
    }
    let clone = store.clone();
    assert_eq!(clone.create(task("t3")).await, Err(StoreError::Full));
    // By bytes: a record bigger than the whole cap does not fit an empty store.
    let tiny = RedisStore::connect_with_prefix(&redis.url(), "tiny")
        .await
        .unwrap()
        .max_task_bytes(10);
    assert_eq!(tiny.create(task("big")).await, Err(StoreError::Full));
    // A cap above the default takes more than the default would.
    let wide = RedisStore::connect_with_prefix(&redis.url(), "wide")
        .await
        .unwrap()
        .max_tasks(mcp_runtime::store::DEFAULT_MAX_TASKS + 5);
    let ids: Vec<String> = (0..mcp_runtime::store::DEFAULT_MAX_TASKS)
        .map(|i| format!("w{i}"))
        .collect();
    seed(
        redis.port,
        "ZADD",
        "wide:tasks:ids",
        &ids,
        "99999999999999",
        true,
    );
    wide.create(task("one-past-the-default")).await.unwrap();

    let record = |v: serde_json::Value| HandleRecord {
        owner: None,
        value: v,
    };
    let ttl = Duration::from_secs(60);
    store.insert("h_a", record(json!(1)), ttl).await.unwrap();
    store.insert("h_b", record(json!(2)), ttl).await.unwrap();
    assert_eq!(
        store.insert("h_c", record(json!(3)), ttl).await,
        Err(StoreError::Full)
    );
    assert_eq!(HandleStore::remove(&store, "h_b").await, Ok(true));
    // 20 bytes of JSON at most, together: "1" holds 1, so 19 are left.
    let text = |n: usize| json!("x".repeat(n - 2));
    assert_eq!(
        store.insert("h_c", record(text(20)), ttl).await,
        Err(StoreError::Full)
    );
    store.insert("h_c", record(text(19)), ttl).await.unwrap();
}

/// An owner's index of handle ids holds only the live ones: each mint drops the expired
/// ones. Before, every mint added its id to a set that only `list` ever took expired ids
/// out of, and stretched its expiry, so an owner minting steadily had an index that grew
/// for ever. An index key of another type (as a plain set) does not fail a mint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owners_index_of_handles_keeps_only_the_live_ones() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    assert_eq!(
        command(
            redis.port,
            &[b"SADD", b"mcp:hz:-", b"h_PLAINSETPLAINSETPLAINS"]
        ),
        ":1"
    );
    let record = HandleRecord {
        owner: None,
        value: json!("v"),
    };
    for id in ["h_A", "h_B", "h_C"] {
        store
            .insert(id, record.clone(), Duration::from_millis(300))
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    store
        .insert("h_LIVE", record.clone(), Duration::from_secs(60))
        .await
        .unwrap();
    // Nothing in the index of the old kind (a plain set, `mcp:ho:-`, which held all 4).
    assert_eq!(integer(redis.port, "EXISTS", "mcp:ho:-"), 0);
    assert_eq!(integer(redis.port, "ZCARD", "mcp:hz:-"), 1);
    assert_ne!(
        command(redis.port, &[b"ZSCORE", b"mcp:hz:-", b"h_LIVE"]),
        "$-1"
    );
    assert_eq!(
        HandleStore::list(&store, None).await,
        Ok(vec![("h_LIVE".to_owned(), json!("v"))])
    );
}

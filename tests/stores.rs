//! One suite for every back end of what instances share: the in-process stores and
//! `RedisStore` (against a real `redis-server` started by the test) pass the same checks
//! of the handle, task and replay store contracts and of the notification bus.
//!
//! The Redis half needs `redis-server` (Debian package, installed by `.ci/run`); it is
//! skipped when missing, unless `MCP_FLEET=required`.

#[path = "common/fleet.rs"]
mod fleet;

use futures_util::StreamExt;
use mcp_runtime::protocol::tasks::TaskStatus;
use mcp_runtime::store::redis::RedisStore;
use mcp_runtime::store::{
    CatalogChange, CatalogOp, Change, HandleRecord, HandleStore, ItemKind, LocalBus,
    MemoryHandleStore, MemoryReplayStore, MemoryTaskStore, NotificationBus, ReplayStore,
    TaskChange, TaskRecord, TaskStore,
};
use mcp_runtime::testing::TestClient;
use mcp_runtime::{Server, tool, tools};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn record(owner: Option<&str>, v: serde_json::Value) -> HandleRecord {
    HandleRecord {
        owner: owner.map(str::to_owned),
        value: v,
    }
}

async fn handle_suite(store: Arc<dyn HandleStore>, tag: &str) {
    let id = |n: &str| format!("h_{tag}{n}");
    let long = Duration::from_secs(60);
    store
        .insert(&id("a"), record(Some("alice"), json!({"n": 1})), long)
        .await
        .unwrap();
    store
        .insert(&id("b"), record(Some("alice"), json!([1, 2])), long)
        .await
        .unwrap();
    store
        .insert(&id("c"), record(None, json!("x")), long)
        .await
        .unwrap();
    let got = store.get(&id("a")).await.unwrap().unwrap();
    assert_eq!(got, record(Some("alice"), json!({"n": 1})));
    assert_eq!(store.get(&id("c")).await.unwrap().unwrap().owner, None);
    assert!(store.get(&id("zzz")).await.unwrap().is_none());

    // Replacing keeps the owner; a missing handle is not replaced.
    assert!(
        store
            .replace(&id("a"), json!({"n": 2, "big": 9007199254740993u64}))
            .await
            .unwrap()
    );
    let got = store.get(&id("a")).await.unwrap().unwrap();
    assert_eq!(got.owner.as_deref(), Some("alice"));
    assert_eq!(
        got.value,
        json!({"n": 2, "big": 9007199254740993u64}),
        "numbers survive"
    );
    assert!(!store.replace(&id("zzz"), json!(1)).await.unwrap());

    // Compare and set: replaced only while the value is still the one read.
    let now = json!({"n": 2, "big": 9007199254740993u64});
    let next = json!({"n": 3});
    assert_eq!(
        store
            .replace_if(&id("a"), &json!({"n": 1}), next.clone())
            .await
            .unwrap(),
        Some(false)
    );
    assert_eq!(
        store
            .replace_if(&id("a"), &now, next.clone())
            .await
            .unwrap(),
        Some(true)
    );
    assert_eq!(store.get(&id("a")).await.unwrap().unwrap().value, next);
    assert_eq!(
        store.replace_if(&id("zzz"), &now, next).await.unwrap(),
        None
    );
    // A float whose digits may not read back the same (without serde_json's
    // `float_roundtrip`) is compared as a value, not as text.
    let price = json!({"total": 0.117_700_000_000_000_01});
    store
        .insert(&id("price"), record(None, price.clone()), long)
        .await
        .unwrap();
    let read = store.get(&id("price")).await.unwrap().unwrap().value;
    assert_eq!(
        store
            .replace_if(&id("price"), &read, json!({"total": 1}))
            .await
            .unwrap(),
        Some(true)
    );
    assert!(store.remove(&id("price")).await.unwrap());
    // Concurrent read-modify-writes through it lose nothing.
    store
        .insert(&id("count"), record(None, json!(0)), long)
        .await
        .unwrap();
    let bumps = (0..20).map(|_| {
        let (store, key) = (Arc::clone(&store), id("count"));
        tokio::spawn(async move {
            loop {
                let seen = store.get(&key).await.unwrap().unwrap().value;
                let bumped = json!(seen.as_i64().unwrap() + 1);
                if store.replace_if(&key, &seen, bumped).await.unwrap() == Some(true) {
                    break;
                }
            }
        })
    });
    for b in bumps.collect::<Vec<_>>() {
        b.await.unwrap();
    }
    assert_eq!(
        store.get(&id("count")).await.unwrap().unwrap().value,
        json!(20)
    );
    assert!(store.remove(&id("count")).await.unwrap());

    // Lists are per owner.
    let mut alice: Vec<String> = store
        .list(Some("alice"))
        .await
        .unwrap()
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    alice.sort();
    assert_eq!(alice, [id("a"), id("b")]);
    let unowned = store.list(None).await.unwrap();
    assert_eq!(unowned, [(id("c"), json!("x"))]);
    assert!(store.list(Some("bob")).await.unwrap().is_empty());

    // Removal, once.
    assert!(store.remove(&id("b")).await.unwrap());
    assert!(!store.remove(&id("b")).await.unwrap());
    assert!(store.get(&id("b")).await.unwrap().is_none());
    assert_eq!(store.list(Some("alice")).await.unwrap().len(), 1);

    // Expiry: gone from get, replace, remove and list.
    store
        .insert(
            &id("short"),
            record(Some("carol"), json!(1)),
            Duration::from_millis(50),
        )
        .await
        .unwrap();
    assert!(store.get(&id("short")).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(store.get(&id("short")).await.unwrap().is_none());
    assert!(!store.replace(&id("short"), json!(2)).await.unwrap());
    assert!(store.list(Some("carol")).await.unwrap().is_empty());

    // A list longer than a page of the index (Redis reads 1000 ids at a time), with some
    // expired among them: every live one, once.
    for n in 0..2500 {
        let ttl = if n % 10 == 0 {
            Duration::from_millis(50)
        } else {
            long
        };
        store
            .insert(
                &id(&format!("many{n}")),
                record(Some("dave"), json!(n)),
                ttl,
            )
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    let mut many: Vec<i64> = store
        .list(Some("dave"))
        .await
        .unwrap()
        .into_iter()
        .map(|(_, v)| v.as_i64().unwrap())
        .collect();
    many.sort_unstable();
    let live: Vec<i64> = (0..2500).filter(|n| n % 10 != 0).collect();
    assert_eq!(many, live);
}

fn task(id: &str, ttl: Duration) -> TaskRecord {
    TaskRecord::new(
        id.into(),
        ttl,
        Some(Duration::from_millis(500)),
        Some("alice".into()),
    )
}

async fn task_suite(store: Arc<dyn TaskStore>, tag: &str) {
    let id = format!("{tag}-t1");
    store
        .create(task(&id, Duration::from_secs(60)))
        .await
        .unwrap();
    let t = store.get(&id).await.unwrap().unwrap();
    assert_eq!(
        (t.status(), t.owner()),
        (TaskStatus::Working, Some("alice"))
    );
    assert!(store.get("nope").await.unwrap().is_none());
    assert!(
        store
            .update("nope", TaskChange::Cancel)
            .await
            .unwrap()
            .is_none()
    );

    // A watcher wakes after a change.
    let mut watch = store.watch(&id);
    let waker = {
        let store = Arc::clone(&store);
        let id = id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            store
                .update(&id, TaskChange::Message("half way".into()))
                .await
                .unwrap();
        })
    };
    tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("woken within 5 s")
        .expect("still watching");
    waker.await.unwrap();
    assert_eq!(
        store.get(&id).await.unwrap().unwrap().status_message(),
        Some("half way")
    );

    // A lease's renewal wakes nobody; an abandonment (once the lease ran out) does, and
    // fails the task once.
    let leased = format!("{tag}-leased");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    store
        .create(task(&leased, Duration::from_secs(60)).leased_until(now + 60_000))
        .await
        .unwrap();
    let mut watch = store.watch(&leased);
    let kept = store
        .update(&leased, TaskChange::Abandon)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.status(), TaskStatus::Working, "the lease still runs");
    let renewed = store
        .update(&leased, TaskChange::Renew(now - 1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(renewed.lease_ms(), Some(now - 1));
    let woke = tokio::time::timeout(Duration::from_millis(300), watch.next()).await;
    assert!(woke.is_err(), "a renewal woke a watcher");
    let failed = store
        .update(&leased, TaskChange::Abandon)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.status(), TaskStatus::Failed);
    tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("woken within 5 s")
        .expect("still watching");

    // Concurrent changes from many "instances": none is lost.
    let asks = (0..20).map(|n| {
        let store = Arc::clone(&store);
        let id = id.clone();
        tokio::spawn(async move {
            let ask = [(format!("k{n}"), json!({"method": "elicitation/create"}))].into();
            store
                .update(&id, TaskChange::Ask(ask))
                .await
                .unwrap()
                .unwrap();
        })
    });
    for a in asks.collect::<Vec<_>>() {
        a.await.unwrap();
    }
    let t = store.get(&id).await.unwrap().unwrap();
    assert_eq!(t.status(), TaskStatus::InputRequired);
    assert_eq!(t.input_requests().len(), 20, "no update lost");

    // Terminal statuses stick.
    store
        .update(&id, TaskChange::Complete(json!({"content": []})))
        .await
        .unwrap();
    let after = store
        .update(&id, TaskChange::Cancel)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status(), TaskStatus::Completed);
    assert!(after.input_requests().is_empty());

    // A task kept "for ever" (`Tasks::ttl(Duration::MAX)`) is stored and found, with a
    // `ttlMs` a JSON number holds exactly.
    let forever = format!("{tag}-forever");
    store
        .create(task(&forever, Duration::MAX))
        .await
        .expect("a task with the longest TTL is stored");
    let t = store.get(&forever).await.unwrap().unwrap();
    assert!(t.ttl_ms() < (1 << 53), "ttlMs {}", t.ttl_ms());

    // Expiry: the task goes, and so do its watchers.
    let short = format!("{tag}-short");
    store
        .create(task(&short, Duration::from_millis(100)))
        .await
        .unwrap();
    let mut watch = store.watch(&short);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(store.get(&short).await.unwrap().is_none());
    store.expire().await.unwrap();
    let end = tokio::time::timeout(Duration::from_secs(10), async {
        while watch.next().await.is_some() {}
    })
    .await;
    assert!(end.is_ok(), "the watch ends with its task");
}

async fn replay_suite(store: Arc<dyn ReplayStore>, tag: &str) {
    let id = format!("{tag}-s1");
    // Of concurrent redemptions, exactly one wins.
    let tries: Vec<_> = (0..10)
        .map(|_| {
            let store = Arc::clone(&store);
            let id = id.clone();
            tokio::spawn(async move { store.redeem(&id, Duration::from_secs(60)).await.unwrap() })
        })
        .collect();
    let mut won = 0;
    for t in tries {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1);
    assert!(!store.redeem(&id, Duration::from_secs(60)).await.unwrap());
    // Once expired, an id is forgotten.
    let short = format!("{tag}-s2");
    assert!(
        store
            .redeem(&short, Duration::from_millis(50))
            .await
            .unwrap()
    );
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(
        store
            .redeem(&short, Duration::from_millis(50))
            .await
            .unwrap()
    );
}

async fn bus_suite(bus: Arc<dyn NotificationBus>) {
    let mut a = bus.subscribe();
    let mut b = bus.subscribe();
    // Give a shared bus's subscription time to be in place.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let catalog = Change::Catalog(CatalogChange::new(
        ItemKind::Tool,
        "report",
        CatalogOp::Added,
        "x",
    ));
    let sent = [
        Change::ResourceUpdated("notes://1".into()),
        catalog,
        Change::ToolsListChanged,
    ];
    for c in &sent {
        bus.publish(c.clone());
    }
    for s in [&mut a, &mut b] {
        for c in &sent {
            let got = tokio::time::timeout(Duration::from_secs(5), s.next())
                .await
                .expect("delivered")
                .expect("open");
            assert_eq!(&got, c, "in order, each once");
        }
        assert!(
            tokio::time::timeout(Duration::from_millis(200), s.next())
                .await
                .is_err(),
            "nothing more"
        );
    }
}

#[tokio::test]
async fn the_in_process_stores_pass_the_suite() {
    handle_suite(Arc::new(MemoryHandleStore::new()), "m").await;
    task_suite(Arc::new(MemoryTaskStore::new()), "m").await;
    replay_suite(Arc::new(MemoryReplayStore::new()), "m").await;
    bus_suite(Arc::new(LocalBus::default())).await;
}

/// Writes the report.
#[tool]
async fn report() -> &'static str {
    "report"
}

/// Says hi.
#[tool]
async fn hi() -> &'static str {
    "hi"
}

/// The tool names `client`'s server lists.
async fn listed(client: &TestClient) -> Vec<String> {
    // With no tool left, the server has no tools capability (and no `tools/list`).
    let Ok((list, _)) = client.request("tools/list", json!({})).await else {
        return Vec::new();
    };
    let tools = list["tools"].as_array().cloned().unwrap_or_default();
    tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// Waits (up to 5 s) until `client`'s server lists `name`, or not.
async fn until_listed(client: &TestClient, name: &str, listed_or_not: bool) {
    for _ in 0..100 {
        if listed(client).await.iter().any(|n| n == name) == listed_or_not {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "`{name}` listed {}: {:?}",
        !listed_or_not,
        listed(client).await
    );
}

/// An instance serving `hi`, with `report` on standby, on a bus of its own (which the
/// test publishes other instances' changes on), once its pump is subscribed.
async fn instance() -> (Arc<LocalBus>, Server, TestClient) {
    let bus = Arc::new(LocalBus::default());
    let server = Server::builder("x", "1")
        .tools(tools![hi])
        .standby_tools(tools![report])
        .notification_bus(Arc::clone(&bus))
        .build()
        .unwrap();
    let client = TestClient::new(server.clone());
    // Give the server's pump time to subscribe.
    tokio::time::sleep(Duration::from_millis(100)).await;
    (bus, server, client)
}

#[tokio::test]
async fn catalog_changes_arriving_out_of_order_leave_the_later_in_force() {
    let (bus, server, client) = instance().await;
    let made = |name: &str, op, at| {
        Change::Catalog(CatalogChange {
            at,
            ..CatalogChange::new(ItemKind::Tool, name, op, "elsewhere")
        })
    };
    // Another instance switched `report` on at 2000; a change it made at 1000, switching
    // it off, arrives after it (and a later change to another item after that).
    bus.publish(made("report", CatalogOp::Added, 2_000));
    until_listed(&client, "report", true).await;
    bus.publish(made("report", CatalogOp::Removed, 1_000));
    bus.publish(made("hi", CatalogOp::Removed, 3_000));
    until_listed(&client, "hi", false).await;
    assert!(
        listed(&client).await.contains(&"report".to_owned()),
        "the later change stays"
    );

    // An instance whose clock runs an hour ahead switched it off. A change made here
    // afterwards is stamped after it, so every instance keeps this one.
    let ahead =
        CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Removed, "ahead").at + 3_600_000;
    bus.publish(made("report", CatalogOp::Removed, ahead));
    until_listed(&client, "report", false).await;
    let mut seen = bus.subscribe();
    assert!(server.enable_tool("report").unwrap());
    let Some(Change::Catalog(sent)) = seen.next().await else {
        panic!("the change is published");
    };
    assert_eq!((sent.op, sent.name.as_str()), (CatalogOp::Added, "report"));
    assert!(sent.at > ahead, "{} after {ahead}", sent.at);
    until_listed(&client, "report", true).await;
}

#[tokio::test]
async fn a_local_change_that_does_nothing_does_not_hide_one_made_before_it() {
    let (bus, server, client) = instance().await;
    // `report` is on standby, not served: removing it here does nothing.
    assert!(!server.remove_tool("report"));
    // Another instance switched it on a moment earlier; its change arrives now.
    let earlier = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "elsewhere");
    let earlier = CatalogChange {
        at: earlier.at - 1_000,
        ..earlier
    };
    bus.publish(Change::Catalog(earlier));
    until_listed(&client, "report", true).await;
}

#[tokio::test]
async fn changes_stamped_alike_on_two_instances_end_alike_whatever_their_order() {
    let at = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "x").at + 60_000;
    let change = |op, origin: &str| {
        Change::Catalog(CatalogChange {
            at,
            ..CatalogChange::new(ItemKind::Tool, "report", op, origin)
        })
    };
    let mut ends = Vec::new();
    for order in [
        [CatalogOp::Added, CatalogOp::Removed],
        [CatalogOp::Removed, CatalogOp::Added],
    ] {
        let (bus, _server, client) = instance().await;
        // Added on instance "b", removed on "a", in the same millisecond: "b" wins.
        for op in order {
            let origin = if op == CatalogOp::Added { "b" } else { "a" };
            bus.publish(change(op, origin));
        }
        // A later change to another item marks the end of the two.
        let marker = CatalogChange {
            at: at + 1,
            ..CatalogChange::new(ItemKind::Tool, "hi", CatalogOp::Removed, "z")
        };
        bus.publish(Change::Catalog(marker));
        until_listed(&client, "hi", false).await;
        ends.push(listed(&client).await);
    }
    assert_eq!(ends[0], ["report"], "the later (by origin) is in force");
    assert_eq!(ends[0], ends[1], "both orders end alike");
}

fn redis_available() -> bool {
    fleet::available(&["redis-server"])
}

#[tokio::test]
async fn the_redis_store_passes_the_same_suite() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    store.ping().await.unwrap();
    handle_suite(Arc::new(store.clone()), "r").await;
    task_suite(Arc::new(store.clone()), "r").await;
    replay_suite(Arc::new(store.clone()), "r").await;
    bus_suite(Arc::new(store.clone())).await;

    // Two stores (two instances) on one Redis: a change published by one reaches the
    // other, and the catalog record is there for an instance that starts later.
    let other = RedisStore::connect(&redis.url()).await.unwrap();
    let mut seen = other.subscribe();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let added = CatalogChange {
        kind: ItemKind::Prompt,
        name: "brief".into(),
        op: CatalogOp::Added,
        origin: "a".into(),
        at: 1_000,
    };
    store.publish(Change::Catalog(added.clone()));
    let got = tokio::time::timeout(Duration::from_secs(5), seen.next())
        .await
        .unwrap();
    assert_eq!(got, Some(Change::Catalog(added.clone())));
    let removed = CatalogChange {
        op: CatalogOp::Removed,
        origin: "b".into(),
        at: 3_000,
        ..added.clone()
    };
    store.publish(Change::Catalog(removed.clone()));
    tokio::time::timeout(Duration::from_secs(5), seen.next())
        .await
        .unwrap();
    // A change made before the one recorded (published late: retried while Redis was
    // away) is neither recorded nor published; the next change is.
    let stale = CatalogChange {
        at: 2_000,
        ..added.clone()
    };
    let mut mine = store.subscribe();
    store.publish(Change::Catalog(stale.clone()));
    store.publish(Change::PromptsListChanged);
    // The instance that made it (and applied it already) is given the recorded one, so
    // it ends where the others are. (Its own earlier changes may still be coming back to
    // it from Redis, on a loaded machine: those are passed over.)
    let given = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match mine.next().await {
                Some(Change::Catalog(c)) if c == added || c == removed => continue,
                other => break other,
            }
        }
    })
    .await
    .unwrap();
    let replayed = CatalogChange {
        origin: "replayed:b".into(),
        ..removed.clone()
    };
    assert_eq!(given, Some(Change::Catalog(replayed)));
    let next = tokio::time::timeout(Duration::from_secs(5), seen.next())
        .await
        .unwrap();
    assert_eq!(
        next,
        Some(Change::PromptsListChanged),
        "the stale one is not published"
    );
    let late = RedisStore::connect(&redis.url()).await.unwrap();
    let record = late.catalog().await.unwrap();
    assert!(record.contains(&removed), "latest per item: {record:?}");
    assert!(!record.contains(&added), "{record:?}");
    assert!(!record.contains(&stale), "{record:?}");
    // One made as late as the recorded one goes out (changes stamped alike keep their
    // order, as records written without a stamp did).
    let again = CatalogChange {
        op: CatalogOp::Added,
        ..removed.clone()
    };
    store.publish(Change::Catalog(again.clone()));
    let next = tokio::time::timeout(Duration::from_secs(5), seen.next())
        .await
        .unwrap();
    assert_eq!(next, Some(Change::Catalog(again.clone())));
    assert!(late.catalog().await.unwrap().contains(&again));
    // Made in the same millisecond on another instance: the origin decides, as each
    // instance decides (`CatalogChange::supersedes`).
    let tie = |origin: &str| CatalogChange {
        op: CatalogOp::Removed,
        origin: origin.into(),
        ..again.clone()
    };
    store.publish(Change::Catalog(tie("a")));
    store.publish(Change::Catalog(tie("c")));
    let next = tokio::time::timeout(Duration::from_secs(5), seen.next())
        .await
        .unwrap();
    assert_eq!(
        next,
        Some(Change::Catalog(tie("c"))),
        "\"a\" < \"b\" < \"c\""
    );
    assert!(tie("c").supersedes(&again) && !tie("a").supersedes(&again));
    assert!(late.catalog().await.unwrap().contains(&tie("c")));

    // Other prefixes are other servers.
    let apart = RedisStore::connect_with_prefix(&redis.url(), "other")
        .await
        .unwrap();
    assert!(apart.catalog().await.unwrap().is_empty());
    assert!(HandleStore::get(&apart, "h_ra").await.unwrap().is_none());
}

#[tokio::test]
async fn a_redis_outage_is_an_error_not_a_hang_and_the_store_recovers() {
    if !redis_available() {
        return;
    }
    let redis = fleet::Redis::start();
    let url = redis.url();
    let port = redis.port;
    let store = RedisStore::connect(&url).await.unwrap();
    store
        .insert("h_x", record(None, json!(1)), Duration::from_secs(60))
        .await
        .unwrap();
    drop(redis);
    let t = std::time::Instant::now();
    let r = HandleStore::get(&store, "h_x").await;
    assert!(r.is_err(), "{r:?}");
    // A change made while Redis is away is published once it is back (retried for
    // PUBLISH_RETRY_FOR), so other instances and the catalog record get it.
    let enabled = CatalogChange::new(ItemKind::Tool, "report", CatalogOp::Added, "a");
    store.publish(Change::Catalog(enabled.clone()));
    // Longer than the connection's own retries take to give up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "took {:?}",
        t.elapsed()
    );
    // A new Redis on the same port: the store reconnects by itself.
    let bin = fleet::find_program("redis-server").unwrap();
    let mut again = std::process::Command::new(bin)
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(fleet::wait_port(port, Duration::from_secs(10)));
    let mut ok = false;
    for _ in 0..50 {
        if store.ping().await.is_ok() {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut recorded = false;
    if ok {
        let late = RedisStore::connect(&url).await.unwrap();
        for _ in 0..100 {
            if late.catalog().await.is_ok_and(|c| c.contains(&enabled)) {
                recorded = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let _ = again.kill();
    let _ = again.wait();
    assert!(ok, "reconnected");
    assert!(
        recorded,
        "the change made during the outage was published after it"
    );
}

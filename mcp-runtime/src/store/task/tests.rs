//! The task record's status machine, leases, and the memory store.

use super::*;
use serde_json::json;

fn task() -> TaskRecord {
    TaskRecord::new("t".into(), Duration::from_secs(60), None, None)
}

#[test]
fn input_moves_the_status_and_partial_answers_keep_it() {
    let mut t = task();
    let asks: BTreeMap<String, Value> =
        [("a".to_owned(), json!({})), ("b".to_owned(), json!({}))].into();
    assert!(t.apply(&TaskChange::Ask(asks)));
    assert_eq!(t.status(), TaskStatus::InputRequired);
    let answer = |k: &str| {
        let mut m = Map::new();
        m.insert(k.into(), json!({"action": "accept"}));
        m.insert("unknown".into(), json!({}));
        TaskChange::Answer(m)
    };
    assert!(t.apply(&answer("a")));
    assert_eq!(t.status(), TaskStatus::InputRequired);
    assert_eq!(t.input_requests().keys().collect::<Vec<_>>(), ["b"]);
    assert!(!t.apply(&answer("a")), "answered already: ignored");
    assert!(t.apply(&answer("b")));
    assert_eq!(t.status(), TaskStatus::Working);
    assert_eq!(t.input_responses().len(), 2);
    assert!(t.apply(&TaskChange::Take(vec!["a".into(), "b".into()])));
    assert!(t.input_responses().is_empty());
}

#[test]
fn a_withdrawn_question_leaves_the_outstanding_ones() {
    let mut t = task();
    let asks: BTreeMap<String, Value> =
        [("a".to_owned(), json!({})), ("b".to_owned(), json!({}))].into();
    assert!(t.apply(&TaskChange::Ask(asks)));
    assert!(t.apply(&TaskChange::Withdraw(vec!["a".into()])));
    assert_eq!(t.status(), TaskStatus::InputRequired, "b is still asked");
    assert_eq!(t.input_requests().keys().collect::<Vec<_>>(), ["b"]);
    assert!(
        !t.apply(&TaskChange::Withdraw(vec!["a".into()])),
        "gone already"
    );
    // An answer not taken yet goes with its question.
    let mut m = Map::new();
    m.insert("b".into(), json!({"action": "accept"}));
    assert!(t.apply(&TaskChange::Answer(m)));
    assert!(t.apply(&TaskChange::Ask([("c".to_owned(), json!({}))].into())));
    assert!(t.apply(&TaskChange::Withdraw(vec!["b".into(), "c".into()])));
    assert!(t.input_responses().is_empty());
    assert!(t.input_requests().is_empty());
    assert_eq!(t.status(), TaskStatus::Working);
}

#[test]
fn terminal_statuses_never_change() {
    for end in [
        TaskChange::Complete(json!({"content": []})),
        TaskChange::Fail(json!({"code": -32603, "message": "boom"})),
        TaskChange::Cancel,
    ] {
        let mut t = task();
        assert!(t.apply(&end));
        let frozen = t.clone();
        for later in [
            TaskChange::Cancel,
            TaskChange::Complete(json!({})),
            TaskChange::Message("x".into()),
            TaskChange::Ask([("k".to_owned(), json!({}))].into()),
        ] {
            assert!(!t.apply(&later));
        }
        assert_eq!(t, frozen);
    }
    let mut t = task();
    t.apply(&TaskChange::Fail(
        json!({"code": -32603, "message": "boom"}),
    ));
    assert_eq!(t.status_message(), Some("boom"));
}

#[tokio::test]
async fn a_lapsed_lease_fails_the_task_once_and_a_renewed_one_never() {
    let now = now_ms();
    let mut t = task().leased_until(now + 60_000);
    assert!(!t.is_abandoned(now));
    assert!(!t.apply(&TaskChange::Abandon), "the lease still runs");
    assert_eq!(t.status(), TaskStatus::Working);

    let updated = t.updated_ms();
    assert!(t.apply(&TaskChange::Renew(now.saturating_sub(1))));
    assert_eq!(
        t.updated_ms(),
        updated,
        "bookkeeping: clients see no change"
    );
    assert!(t.is_abandoned(now));
    assert!(t.apply(&TaskChange::Abandon));
    assert_eq!(t.status(), TaskStatus::Failed);
    assert_eq!(t.error().unwrap()["code"], -32603);
    assert!(
        t.status_message()
            .unwrap()
            .contains("instance running the task stopped")
    );
    assert!(!t.is_abandoned(now), "terminal");
    assert!(
        !t.apply(&TaskChange::Renew(now + 60_000)),
        "terminal: no renewal"
    );

    // A record of an older version has no lease: never taken for abandoned.
    let old = task();
    assert_eq!(old.lease_ms(), None);
    assert!(!old.is_abandoned(u64::MAX));
    let text = serde_json::to_string(&old).unwrap();
    assert!(!text.contains("lease"), "{text}");

    // A renewal wakes no watcher; an abandonment does.
    let store = MemoryTaskStore::new();
    store
        .create(task().leased_until(now + 60_000))
        .await
        .unwrap();
    let mut watch = store.watch("t");
    store.update("t", TaskChange::Renew(1)).await.unwrap();
    let woke = tokio::time::timeout(Duration::from_millis(50), watch.next()).await;
    assert!(woke.is_err(), "a renewal woke a watcher");
    let after = store
        .update("t", TaskChange::Abandon)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status(), TaskStatus::Failed);
    assert_eq!(watch.next().await, Some(()));
}

#[tokio::test]
async fn the_memory_store_watches_caps_and_expires() {
    let store = MemoryTaskStore::with_capacity(1);
    store.create(task()).await.unwrap();
    let mut watch = store.watch("t");
    store
        .update("t", TaskChange::Message("half".into()))
        .await
        .unwrap();
    assert_eq!(watch.next().await, Some(()));
    let other = TaskRecord::new("u".into(), Duration::from_secs(60), None, None);
    assert_eq!(store.create(other).await, Err(StoreError::Full));
    assert!(store.watch("nope").next().await.is_none());

    let store = MemoryTaskStore::new();
    let short = TaskRecord::new("s".into(), Duration::from_millis(20), None, None);
    store.create(short).await.unwrap();
    let mut watch = store.watch("s");
    tokio::time::sleep(Duration::from_millis(40)).await;
    assert!(store.get("s").await.unwrap().is_none(), "expired");
    assert!(watch.next().await.is_none(), "the watch ends with the task");
    assert!(
        store
            .update("s", TaskChange::Cancel)
            .await
            .unwrap()
            .is_none()
    );
}

/// What finished tasks keep (their results) counts against the store's byte cap: past it,
/// a new task is refused (`Full`) until expired ones make room, so results kept for
/// their TTL cannot grow without bound while the count of tasks stays under its cap.
#[tokio::test]
async fn the_memory_store_caps_the_bytes_its_tasks_hold() {
    let store = MemoryTaskStore::with_capacity(100).max_bytes(10_000);
    let short = |id: &str| TaskRecord::new(id.into(), Duration::from_millis(200), None, None);
    store.create(short("a")).await.unwrap();
    let big = serde_json::json!({"content": [{"type": "text", "text": "x".repeat(20_000)}]});
    store.update("a", TaskChange::Complete(big)).await.unwrap();
    assert_eq!(store.create(short("b")).await, Err(StoreError::Full));
    // The result is still there for its TTL...
    assert!(store.get("a").await.unwrap().unwrap().result().is_some());
    // ...and once it has expired, there is room again.
    tokio::time::sleep(Duration::from_millis(250)).await;
    store.create(short("c")).await.unwrap();
}

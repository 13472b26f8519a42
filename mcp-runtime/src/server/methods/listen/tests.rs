//! The listen stream's tests: filters, caps, and task changes told in time.

use super::*;

#[test]
fn a_subscription_covers_its_uri_and_those_below_it() {
    assert!(covers("file:///a", "file:///a"));
    assert!(covers("file:///a", "file:///a/b"));
    assert!(!covers("file:///a", "file:///ab"));
    assert!(!covers("file:///a/b", "file:///a"));
}

#[test]
fn a_listen_request_subscribes_to_at_most_256_resources() {
    let uris: Vec<String> = (0..=256).map(|i| format!("a://{i}")).collect();
    let e = Filter::parse(Some(&json!({"resourceSubscriptions": uris}))).err();
    assert_eq!(
        e,
        Some("`resourceSubscriptions` holds too many URIs (at most 256)")
    );
    let f = Filter::parse(Some(&json!({"resourceSubscriptions": uris[..256]}))).unwrap();
    assert_eq!(f.uris.len(), 256);
}

#[test]
fn filters() {
    let f = Filter::parse(Some(
        &json!({"toolsListChanged": true, "resourceSubscriptions": ["a://x"], "taskIds": ["t"]}),
    ))
    .unwrap();
    assert!(f.tools && !f.prompts);
    assert!(f.wants(&Change::ToolsListChanged).is_some());
    assert!(f.wants(&Change::PromptsListChanged).is_none());
    assert!(f.wants(&Change::ResourceUpdated("a://x".into())).is_some());
    assert!(
        f.wants(&Change::ResourceUpdated("a://x/part".into()))
            .is_some()
    );
    assert!(f.wants(&Change::ResourceUpdated("a://xy".into())).is_none());
    assert!(Filter::parse(None).is_err());
    assert!(Filter::parse(Some(&json!({"toolsListChanged": "yes"}))).is_err());
}

/// A store whose task ends right after the first read of it: as when the task ends
/// between the listen stream's lookup and its watch.
struct EndsAfterRead {
    inner: crate::store::MemoryTaskStore,
    armed: std::sync::atomic::AtomicBool,
}

impl TaskStore for EndsAfterRead {
    fn create(
        &self,
        task: crate::store::TaskRecord,
    ) -> futures_util::future::BoxFuture<'_, Result<(), crate::store::StoreError>> {
        self.inner.create(task)
    }
    fn get<'a>(
        &'a self,
        id: &'a str,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<crate::store::TaskRecord>, crate::store::StoreError>,
    > {
        Box::pin(async move {
            let found = self.inner.get(id).await;
            if self.armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
                let done = crate::store::TaskChange::Complete(json!({"content": []}));
                self.inner.update(id, done).await.unwrap();
            }
            found
        })
    }
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: crate::store::TaskChange,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<crate::store::TaskRecord>, crate::store::StoreError>,
    > {
        self.inner.update(id, change)
    }
    fn watch(&self, id: &str) -> BoxStream<'static, ()> {
        self.inner.watch(id)
    }
    fn expire(
        &self,
    ) -> futures_util::future::BoxFuture<'_, Result<usize, crate::store::StoreError>> {
        self.inner.expire()
    }
}

/// A task that ends between the lookup of the ids asked for and the watch on it is
/// still told of, at once (not at the next periodic check, a lease later).
#[tokio::test]
async fn a_task_ending_while_it_is_looked_up_is_told_of() {
    let store = Arc::new(EndsAfterRead {
        inner: crate::store::MemoryTaskStore::new(),
        armed: false.into(),
    });
    let task = crate::store::TaskRecord::new("t".into(), Duration::from_secs(60), None, None);
    store.create(task).await.unwrap();
    store.armed.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut watch = TaskWatch {
        store: store.clone(),
        asked: vec!["t".into()],
        changes: SelectAll::new(),
        sent: HashMap::new(),
        caller: None,
        check: Duration::from_secs(60),
    };
    assert_eq!(watch.resolve().await, ["t"]);
    let woken = tokio::time::timeout(Duration::from_secs(1), watch.changes.next()).await;
    assert_eq!(woken.ok().flatten().as_deref(), Some("t"), "not woken");
    let n = watch
        .notification("t", &RequestId::String("s".into()))
        .await
        .unwrap();
    assert!(n.contains(r#""status":"completed""#), "{n}");
}

/// A question asked in the same millisecond as the change told of before (same status,
/// same `lastUpdatedAt`) is told of: the task's `inputRequests` changed.
#[tokio::test]
async fn a_question_asked_within_the_same_millisecond_is_told_of() {
    use crate::store::TaskChange;
    let store = Arc::new(crate::store::MemoryTaskStore::new());
    // Last updated ahead of the clock: every change keeps that time, as changes
    // within one millisecond do.
    let task = TaskRecord::new("t".into(), Duration::from_secs(60), None, None);
    let mut task = serde_json::to_value(task).unwrap();
    task["updatedMs"] = json!(crate::store::now_ms() + 3_600_000);
    store
        .create(serde_json::from_value(task).unwrap())
        .await
        .unwrap();
    let mut watch = TaskWatch {
        store: store.clone(),
        asked: vec!["t".into()],
        changes: SelectAll::new(),
        sent: HashMap::new(),
        caller: None,
        check: Duration::from_secs(60),
    };
    assert_eq!(watch.resolve().await, ["t"]);
    let sub = RequestId::String("s".into());
    let ask = |k: &str| TaskChange::Ask([(k.to_owned(), json!({"method": "m"}))].into());
    store.update("t", ask("first")).await.unwrap();
    let n = watch.notification("t", &sub).await.unwrap();
    assert!(n.contains(r#""first""#), "{n}");
    store.update("t", ask("second")).await.unwrap();
    let n = watch.notification("t", &sub).await;
    assert!(
        n.as_deref().is_some_and(|n| n.contains(r#""second""#)),
        "{n:?}"
    );
    // Nothing changed since: nothing is told.
    assert_eq!(watch.notification("t", &sub).await, None);
}

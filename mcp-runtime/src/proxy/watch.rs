//! What an upstream tells about changes, asked for and heard: the stream of its list
//! changes (a 2026-07-28 `subscriptions/listen`, a legacy HTTP upstream's GET stream; a
//! legacy stdio upstream's notifications come anyway), and updates of the resources it
//! was asked to watch.

use super::link::{Link, Session, Wire};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The `subscriptions/listen` requests for resource updates: their request ids on stdio,
/// their tasks over HTTP.
pub(super) enum Watch {
    Stdio(Vec<u64>),
    Http(Vec<tokio::task::AbortHandle>),
}

/// URIs asked for in one `subscriptions/listen`: a server may hold each to a cap (this
/// framework's is 256), so more are asked for in several.
const URIS_PER_LISTEN: usize = 256;

impl Link {
    /// Opens the stream the upstream tells its list changes on, if it has lists: a
    /// 2026-07-28 `subscriptions/listen` (on stdio, a request left open; on HTTP, a POST
    /// whose event stream stays open), or a 2025-11-25 HTTP upstream's GET stream (on
    /// stdio its notifications come anyway). Over HTTP it is opened again when it ends.
    /// On stdio it is asked for on `on`, the session of the child as started.
    pub(super) async fn listen(&self, on: Option<&Arc<Session>>) {
        let caps = self.capabilities();
        if !["tools", "prompts", "resources"]
            .iter()
            .any(|k| caps.contains_key(*k))
        {
            return;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let filter = json!({"notifications": {
            "toolsListChanged": caps.contains_key("tools"),
            "promptsListChanged": caps.contains_key("prompts"),
            "resourcesListChanged": caps.contains_key("resources"),
        }});
        let open = self.message(id, "subscriptions/listen", filter, None);
        match &self.wire {
            Wire::Stdio(_) => {
                if self.is_modern()
                    && let Some(session) = on
                {
                    // Its answer comes only when it closes; nobody waits for it.
                    let _ = session.send(open.to_string()).await;
                }
            }
            Wire::Http(_) => {
                let Some(listen) = self.peer(self.is_modern().then_some(open)) else {
                    return;
                };
                let dropped = self.dropped.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = listen.run() => {}
                        () = dropped.cancelled() => {}
                    }
                });
            }
        }
    }

    /// Asks the upstream to tell updates of `uris` (dropping what was asked before, which
    /// was `before`): a 2026-07-28 upstream on a `subscriptions/listen` stream of their
    /// own, a 2025-11-25 one with `resources/subscribe` and `resources/unsubscribe` (when
    /// it offers subscriptions). They come through [`Link::updates`]. On stdio, a child
    /// that exited is started again first.
    pub(crate) async fn watch_resources(&self, uris: &[String], before: &[String]) {
        if self.is_modern() {
            let stdio = match &self.wire {
                Wire::Stdio(_) => match self.session().await {
                    Ok(session) => Some(session),
                    Err(e) => {
                        tracing::debug!("the upstream's resource updates not asked for: {e}");
                        return;
                    }
                },
                Wire::Http(_) => None,
            };
            let previous = self
                .watching
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            match previous {
                Some(Watch::Stdio(ids)) => {
                    for id in ids {
                        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": id}});
                        if let Some(session) = &stdio {
                            let _ = session.send(note.to_string()).await;
                        }
                    }
                }
                Some(Watch::Http(tasks)) => tasks.iter().for_each(|t| t.abort()),
                None => {}
            }
            if uris.is_empty() {
                return;
            }
            let mut watch = match &self.wire {
                Wire::Stdio(_) => Watch::Stdio(Vec::new()),
                Wire::Http(_) => Watch::Http(Vec::new()),
            };
            for chunk in uris.chunks(URIS_PER_LISTEN) {
                let id = self.next.fetch_add(1, Ordering::Relaxed);
                let filter = json!({"notifications": {"resourceSubscriptions": chunk}});
                let open = self.message(id, "subscriptions/listen", filter, None);
                match (&self.wire, &mut watch) {
                    (Wire::Stdio(_), Watch::Stdio(ids)) => {
                        if let Some(session) = &stdio {
                            let _ = session.send(open.to_string()).await;
                        }
                        ids.push(id);
                    }
                    (Wire::Http(_), Watch::Http(tasks)) => {
                        let Some(listen) = self.peer(Some(open)) else {
                            continue;
                        };
                        let dropped = self.dropped.clone();
                        let task = tokio::spawn(async move {
                            tokio::select! {
                                () = listen.run() => {}
                                () = dropped.cancelled() => {}
                            }
                        });
                        tasks.push(task.abort_handle());
                    }
                    _ => {}
                }
            }
            *self.watching.lock().unwrap_or_else(|e| e.into_inner()) = Some(watch);
            return;
        }
        let caps = self.capabilities();
        if caps.get("resources").and_then(|r| r.get("subscribe")) != Some(&json!(true)) {
            return;
        }
        for u in uris.iter().filter(|u| !before.contains(u)) {
            if let Err(e) = self
                .request("resources/subscribe", json!({ "uri": u }))
                .await
            {
                tracing::debug!(uri = %u, "the upstream refused a subscription: {e}");
            }
        }
        for u in before.iter().filter(|u| !uris.contains(u)) {
            let _ = self
                .request("resources/unsubscribe", json!({ "uri": u }))
                .await;
        }
    }

    /// The URIs the upstream says were updated.
    pub(crate) fn updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.changes.updated.subscribe()
    }

    /// What the upstream says about its lists.
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.lists.subscribe()
    }

    /// Told each time a stdio child is started again (its lists and resource updates are
    /// then asked for again).
    pub(crate) fn restarts(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.started.subscribe()
    }
}

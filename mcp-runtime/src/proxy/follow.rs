//! Keeping a server's proxied items in step with the upstream: its lists are read again
//! when it says they changed (`notifications/*/list_changed`, 2025-11-25), when the
//! `ttlMs` its lists gave runs out (2026-07-28), or when its stdio child was started
//! again, and what changed is applied to the
//! server (added, replaced, removed), which tells the server's own listening clients. The
//! upstream's resources are subscribed to, and their updates told under our URIs.

use super::{Upstream, presented};
use crate::server::Server;
use crate::server::mount;
use serde_json::Value;
use std::time::Duration;

/// The shortest wait between two reads of the upstream's lists, whatever its `ttlMs`, and
/// however often it says they changed.
const MIN_REREAD: Duration = Duration::from_secs(1);

/// How long a burst of change notifications is let settle before the lists are read.
const SETTLE: Duration = Duration::from_millis(50);

/// The upstream's lists as read once.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Lists {
    pub(crate) tools: Vec<Value>,
    pub(crate) prompts: Vec<Value>,
    pub(crate) resources: Vec<Value>,
    pub(crate) templates: Vec<Value>,
    /// The shortest `ttlMs` of them, if they gave one.
    pub(crate) ttl_ms: Option<u64>,
}

impl Lists {
    pub(crate) fn shorten(&mut self, ttl: Option<u64>) {
        if let Some(t) = ttl {
            self.ttl_ms = Some(self.ttl_ms.map_or(t, |l| l.min(t)));
        }
    }
}

/// Following an upstream (see [`Upstream::follow`]); it stops when this is dropped.
#[must_use = "following stops when the handle is dropped"]
#[derive(Debug)]
pub struct Following {
    task: tokio::task::JoinHandle<()>,
}

#[cfg(test)]
impl Following {
    /// Whether it stopped by itself.
    pub(crate) fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Upstream {
    /// Keeps what `server` serves from this upstream under `namespace` (mounted with
    /// [`ServerBuilder::mount`](crate::ServerBuilder::mount) from
    /// [`items`](Upstream::items)) in step with it while `server` runs: the upstream's
    /// lists are read again when it announces a change (a 2025-11-25 upstream's
    /// `list_changed` notifications), when their `ttlMs` runs out (a 2026-07-28
    /// upstream; at most once a second), or when a stdio upstream's child that exited was
    /// started again, and the tools, prompts, resources and templates that appeared,
    /// changed or went are added, replaced or removed, so the server's clients are told as
    /// for any runtime change. A read that fails is tried again, after 1 s, doubling up to
    /// 30 s: these reads are requests like any other, so one made after a stdio child
    /// exited starts it again (when its backoff lets it). A stdio upstream that is not
    /// started again ([`Upstream::command`]) is no longer followed once its child exited
    /// (one warning says so). The upstream's static resources are subscribed to (a `subscriptions/listen`
    /// stream, or `resources/subscribe` when a legacy upstream offers it; again for a
    /// child started again), and each update it tells reaches this server's subscribers
    /// under the mounted URI. `namespace`
    /// is the one `items()` was mounted under on `server` itself; items mounted inside
    /// another mounted builder are served, but this does not follow them.
    ///
    /// ```no_run
    /// # use mcp_runtime::Server;
    /// # use mcp_runtime::proxy::Upstream;
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let tickets = Upstream::http("http://127.0.0.1:9000/mcp").await?;
    /// let server = Server::builder("gateway", "1.0")
    ///     .mount("tickets", tickets.items().await?)
    ///     .build()?;
    /// let _following = tickets.follow(&server, "tickets");
    /// server.serve_http("127.0.0.1:8080").await?;
    /// # Ok(()) }
    /// ```
    pub fn follow(&self, server: &Server, namespace: impl Into<String>) -> Following {
        let up = self.clone();
        let ns = namespace.into();
        let server = std::sync::Arc::downgrade(&server.inner);
        let task = tokio::spawn(async move {
            let mut changes = up.link.changes();
            let mut restarts = up.link.restarts();
            let mut updates = up.link.updates();
            let mut seen = up
                .seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_default();
            let mut watched = uris(&seen);
            up.link.watch_resources(&watched, &[]).await;
            let mut backoff = MIN_REREAD;
            // Set when a stdio child was started again: its resource updates are asked
            // for again, whether its lists changed or not.
            let mut rewatch = false;
            // Set when a read failed: it is tried again after `backoff`.
            let mut retry = false;
            // When the lists were last read.
            let mut last_read = None;
            loop {
                let reread = seen
                    .ttl_ms
                    .map(|t| Duration::from_millis(t).max(MIN_REREAD));
                if !retry {
                    tokio::select! {
                        r = changes.changed() => if r.is_err() { return },
                        r = restarts.changed() => {
                            if r.is_err() { return }
                            rewatch = true;
                        }
                        () = sleep_or_never(reread) => {}
                        u = updates.recv() => {
                            // An update of one of its resources: told under our URI.
                            let Some(inner) = server.upgrade() else { return };
                            match u {
                                Ok(uri) => Server { inner }.notify_resource_updated(mount::uri(&ns, &uri)),
                                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                                    tracing::warn!(namespace = %ns, "{n} resource updates of the upstream were dropped");
                                }
                                Err(_) => return,
                            }
                            continue;
                        }
                    }
                }
                tokio::time::sleep(SETTLE).await;
                // At most one read per MIN_REREAD however often the upstream says its lists
                // changed: a flood of `list_changed` costs a read a second, not one per
                // notification (each up to four lists, each rebuilding the catalog and
                // telling every client when they differ).
                if let Some(since) = last_read.map(|at: tokio::time::Instant| at.elapsed())
                    && since < MIN_REREAD
                {
                    tokio::time::sleep(MIN_REREAD - since).await;
                }
                last_read = Some(tokio::time::Instant::now());
                changes.borrow_and_update();
                if restarts.has_changed().unwrap_or(false) {
                    restarts.borrow_and_update();
                    rewatch = true;
                }
                let Some(inner) = server.upgrade() else {
                    return;
                };
                let server = Server { inner };
                match up.read_lists().await {
                    Ok(now) => {
                        (backoff, retry) = (MIN_REREAD, false);
                        if now != seen {
                            super::changes::apply(&up, &server, &ns, &seen, &now);
                        }
                        let now_watched = uris(&now);
                        if rewatch {
                            up.link.watch_resources(&now_watched, &[]).await;
                            (watched, rewatch) = (now_watched, false);
                        } else if now_watched != watched {
                            up.link.watch_resources(&now_watched, &watched).await;
                            watched = now_watched;
                        }
                        seen = now;
                    }
                    Err(e) if up.link.gone_for_good() => {
                        tracing::warn!(namespace = %ns, "reading the upstream's lists: {e}; it is no longer followed");
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(namespace = %ns, "reading the upstream's lists: {e}");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_secs(30));
                        retry = true;
                    }
                }
            }
        });
        Following { task }
    }
}

/// The URIs of the upstream's static resources, whose updates are asked for.
fn uris(lists: &Lists) -> Vec<String> {
    lists
        .resources
        .iter()
        .filter_map(|r| r["uri"].as_str().filter(|u| presented::fixed_uri(u)))
        .map(str::to_owned)
        .collect()
}

async fn sleep_or_never(d: Option<Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

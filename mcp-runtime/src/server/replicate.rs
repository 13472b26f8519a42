//! Catalog replication: a runtime change to the tools, prompts or resources made on one
//! instance is applied on every instance sharing the notification bus, and each instance
//! then tells its own listeners, once.
//!
//! Handlers are code, so instances do not ship definitions to each other: every instance
//! runs the same binary and holds the items that may be switched on at runtime as
//! *standby* items ([`ServerBuilder::standby_tools`](crate::ServerBuilder::standby_tools)).
//! The bus carries only [`CatalogChange`]s (kind, name, added or removed); the pump of
//! each instance applies them from its standby items, then delivers the list change to
//! its listeners. A server without a bus of its own has no pump: changes go straight to
//! its listeners.
//!
//! Changes carry when they were made and where ([`CatalogChange::order`]), and each
//! instance keeps that of the last change it applied to each item ([`Latest`]): a change
//! that comes before it is not applied, so one that arrives late (retried while the bus
//! was away, or replayed) does not undo a newer one. A change made here is always stamped
//! after the last one applied to its item; one made here that changes nothing is no
//! change and leaves no mark.

use super::catalog::{self, Entries};
use super::{BuildError, Server, ServerInner};
use crate::store::{CatalogChange, CatalogOp, Change, ItemKind, NotificationBus};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;

/// The pump's state.
#[derive(Default)]
pub(crate) struct Replication {
    started: AtomicBool,
    /// The catalog has caught up with the bus's record of changes (readiness).
    synced: AtomicBool,
    /// Stops the pump when the server goes away.
    pub(crate) stop: CancellationToken,
    /// The shared bus ended: listen streams end too (abruptly: nothing feeds them).
    ended: CancellationToken,
}

/// Where the last change applied here to each item stands ([`CatalogChange::order`]: its
/// stamp and origin), for the items changed at run time that are served or on standby:
/// an entry goes when its item is neither (a change to it could not apply anyway).
#[derive(Default)]
pub(crate) struct Latest(HashMap<(ItemKind, String), (u64, String)>);

/// A catalog change to apply: made here now, or on another instance (its stamp and
/// origin, [`CatalogChange::order`]).
#[derive(Clone, Copy)]
enum Made<'a> {
    Here,
    At(u64, &'a str),
}

impl ServerInner {
    /// Whether this instance has caught up with the shared catalog (always, without a
    /// bus of its own).
    pub(crate) fn catalog_synced(&self) -> bool {
        self.bus.is_none() || self.replication.synced.load(Ordering::Acquire)
    }

    /// The changes this instance's listen streams and sessions read: what the pump
    /// delivers (or, without a bus of its own, what this instance publishes). Ends when a
    /// shared bus has ended.
    pub(crate) fn changes(&self) -> BoxStream<'static, Change> {
        if self.bus.is_none() {
            return self.fanout.subscribe();
        }
        self.fanout
            .subscribe()
            .take_until(self.replication.ended.clone().cancelled_owned())
            .boxed()
    }

    /// Delivers `change` to every listener of every instance sharing the bus (this
    /// instance's listeners only, without one).
    pub(crate) fn publish(&self, change: Change) {
        match &self.bus {
            Some(bus) => bus.publish(change),
            None => self.deliver(change),
        }
    }

    /// Hands `change` to this instance's listeners; a resource's update is told to the
    /// server's middleware, and its mounted children's, first
    /// ([`Middleware::resource_updated`]), so a cache forgets the
    /// old contents before a listener reads the new.
    ///
    /// [`Middleware::resource_updated`]: crate::middleware::Middleware::resource_updated
    fn deliver(&self, change: Change) {
        if let Change::ResourceUpdated(uri) = &change {
            for layer in &self.told {
                layer.resource_updated(uri);
            }
        }
        self.fanout.publish(change);
    }

    /// Rebuilds the catalog with `edit` (a change to item `kind`/`name`) applied and swaps
    /// it in. `Ok(Some(at))`, the change's stamp, when it changed something; `Ok(None)`
    /// when `edit` changed nothing, or when the change comes before the last one applied
    /// to the item.
    fn rebuild(
        &self,
        (kind, name): (ItemKind, &str),
        made: Made<'_>,
        // Not generic: each caller's edit would copy the whole rebuild.
        edit: Box<dyn FnOnce(&mut Entries) -> bool + '_>,
    ) -> Result<Option<u64>, BuildError> {
        let mut latest = self.changes.lock().unwrap_or_else(|e| e.into_inner());
        let key = (kind, name.to_owned());
        let last = latest.0.get(&key);
        let (at, origin) = match made {
            // After the last one, whatever this instance's clock says.
            Made::Here => {
                let floor = last.map_or(0, |(t, _)| t.saturating_add(1));
                (crate::store::stamp_after(floor), self.instance.as_str())
            }
            Made::At(at, origin) => {
                if last.is_some_and(|(t, o)| (*t, o.as_str()) > (at, origin)) {
                    tracing::debug!(
                        ?kind,
                        name,
                        "a catalog change older than the last one applied to its item is not applied"
                    );
                    return Ok(None);
                }
                (at, origin)
            }
        };
        let mut entries = self.catalog().entries();
        let changed = edit(&mut entries);
        let standby = self.standby.holds(kind, name);
        if !changed {
            // Applied already (or a removal of what is not there): a change made before
            // it, still on its way, must not undo it. One made here that did nothing
            // is no change at all.
            if matches!(made, Made::At(..)) && (standby || entries.holds(kind, name)) {
                latest.0.insert(key, (at, origin.to_owned()));
            }
            return Ok(None);
        }
        let held = standby || entries.holds(kind, name);
        let next = catalog::Catalog::assemble(entries, &self.settings).map_err(BuildError)?;
        if let Some(engine) = next.task_engine {
            let _ = self.task_engine.set(engine);
        }
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        match held {
            true => latest.0.insert(key, (at, origin.to_owned())),
            false => latest.0.remove(&key),
        };
        Ok(Some(at))
    }

    /// Applies a change made on another instance: an added item comes from this
    /// instance's standby items. `false` when it changed nothing here (applied already,
    /// or not applicable).
    fn apply(&self, change: &CatalogChange) -> bool {
        let name = change.name.as_str();
        let standby = &self.standby;
        let item = (change.kind, name);
        let (at, origin) = change.order();
        let made = Made::At(at, origin);
        let result = match (change.kind, change.op) {
            (ItemKind::Tool, CatalogOp::Removed) => self.rebuild(
                item,
                made,
                Box::new(|e| remove(&mut e.tools, |t| t.def.item.name == name)),
            ),
            (ItemKind::Prompt, CatalogOp::Removed) => self.rebuild(
                item,
                made,
                Box::new(|e| remove(&mut e.prompts, |p| p.def.item.name == name)),
            ),
            (ItemKind::Resource, CatalogOp::Removed) => self.rebuild(
                item,
                made,
                Box::new(|e| remove(&mut e.resources, |r| r.def.spec.uri == name)),
            ),
            (ItemKind::Tool, CatalogOp::Added) => {
                let Some(entry) = standby.tools.iter().find(|t| t.def.item.name == name) else {
                    return self.unknown(change);
                };
                let edit = |e: &mut Entries| put(&mut e.tools, entry, |t| t.def.item.name == name);
                self.rebuild(item, made, Box::new(edit))
            }
            (ItemKind::Prompt, CatalogOp::Added) => {
                let Some(entry) = standby.prompts.iter().find(|p| p.def.item.name == name) else {
                    return self.unknown(change);
                };
                let edit =
                    |e: &mut Entries| put(&mut e.prompts, entry, |p| p.def.item.name == name);
                self.rebuild(item, made, Box::new(edit))
            }
            (ItemKind::Resource, CatalogOp::Added) => {
                let Some(entry) = standby.resources.iter().find(|r| r.def.spec.uri == name) else {
                    return self.unknown(change);
                };
                let edit =
                    |e: &mut Entries| put(&mut e.resources, entry, |r| r.def.spec.uri == name);
                self.rebuild(item, made, Box::new(edit))
            }
        };
        match result {
            Ok(changed) => changed.is_some(),
            Err(e) => {
                tracing::warn!(kind = ?change.kind, name, "a catalog change from another instance does not apply here: {e}");
                false
            }
        }
    }

    fn unknown(&self, change: &CatalogChange) -> bool {
        let catalog = self.catalog();
        let name = change.name.as_str();
        let served = match change.kind {
            ItemKind::Tool => catalog.tools.contains_key(name),
            ItemKind::Prompt => catalog.prompts.contains_key(name),
            ItemKind::Resource => {
                catalog.statics.contains_key(name)
                    || catalog.templates.iter().any(|r| r.def.spec.uri == name)
            }
        };
        if served {
            // Added here by hand under that name already: nothing to do.
            return false;
        }
        tracing::warn!(
            kind = ?change.kind,
            name = %change.name,
            origin = %change.origin,
            "another instance added an item this instance does not have among its standby items; its lists now differ (give every instance the same standby items)"
        );
        false
    }
}

impl Entries {
    /// Whether item `kind`/`name` is among these.
    fn holds(&self, kind: ItemKind, name: &str) -> bool {
        match kind {
            ItemKind::Tool => self.tools.iter().any(|t| t.def.item.name == name),
            ItemKind::Prompt => self.prompts.iter().any(|p| p.def.item.name == name),
            ItemKind::Resource => self.resources.iter().any(|r| r.def.spec.uri == name),
        }
    }
}

/// Puts `entry` in `list` in place of the item `same` names; `false` when it is there
/// already.
fn put<T>(list: &mut Vec<Arc<T>>, entry: &Arc<T>, same: impl Fn(&T) -> bool) -> bool {
    if list.iter().any(|x| Arc::ptr_eq(x, entry)) {
        return false;
    }
    list.retain(|x| !same(x));
    list.push(Arc::clone(entry));
    true
}

fn remove<T>(list: &mut Vec<T>, matches: impl Fn(&T) -> bool) -> bool {
    let before = list.len();
    list.retain(|x| !matches(x));
    list.len() != before
}

impl ServerInner {
    /// Applies the shared catalog record (`list`): each change that changes something here
    /// is told to this instance's listeners as its list's change. How many did.
    fn catch_up(&self, list: &[CatalogChange]) -> usize {
        let mut changed = 0;
        for c in list {
            if self.apply(c) {
                self.fanout.publish(c.list_change());
                changed += 1;
            }
        }
        changed
    }
}

/// How often the pump reads the shared catalog record again, to apply a change it missed.
const RESYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// How a server with a bus of its own starts its pump: [`start`], reached only through
/// [`ServerBuilder::notification_bus`](crate::ServerBuilder::notification_bus), so that a
/// server without a bus does not carry the pump's code.
pub(crate) type Pump = fn(&Arc<ServerInner>);

/// Starts the pump of a server with a bus of its own, once, on the current Tokio runtime
/// (a no-op outside one, or when it runs already). The transports call this when they
/// start; `build()` does when it runs inside a runtime.
pub(crate) fn start(inner: &Arc<ServerInner>) {
    let Some(bus) = inner.bus.clone() else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if inner.replication.started.swap(true, Ordering::AcqRel) {
        return;
    }
    let weak = Arc::downgrade(inner);
    let stop = inner.replication.stop.clone();
    runtime.spawn(async move {
        // Subscribe before catching up, so a change made meanwhile is not lost.
        let mut changes = bus.subscribe();
        // Until the record is read the instance is not ready: without it, it would serve
        // another catalog than the others (and nothing would make it catch up later).
        let mut pause = std::time::Duration::from_millis(100);
        loop {
            match bus.catalog().await {
                Ok(list) => {
                    let Some(server) = weak.upgrade() else { return };
                    server.catch_up(&list);
                    if !list.is_empty() {
                        tracing::info!(changes = list.len(), "caught up with the shared catalog");
                    }
                    break;
                }
                Err(e) => tracing::warn!("could not read the shared catalog: {e}; retrying"),
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(std::time::Duration::from_secs(5));
        }
        if let Some(server) = weak.upgrade() {
            server.replication.synced.store(true, Ordering::Release);
        }
        // The record is read again now and then: a change this instance missed (it fell
        // behind the bus, or the bus lost it while away) is applied within that time.
        let mut resync = tokio::time::interval(RESYNC_EVERY);
        resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        resync.reset();
        loop {
            let change = tokio::select! {
                () = stop.cancelled() => return,
                c = changes.next() => match c {
                    Some(c) => c,
                    None => break,
                },
                _ = resync.tick() => {
                    match bus.catalog().await {
                        Ok(list) => {
                            let Some(server) = weak.upgrade() else { return };
                            let changed = server.catch_up(&list);
                            if changed > 0 {
                                tracing::info!(changes = changed, "caught up with catalog changes missed on the bus");
                            }
                        }
                        Err(e) => tracing::debug!("could not read the shared catalog: {e}"),
                    }
                    continue;
                }
            };
            let Some(server) = weak.upgrade() else { return };
            match change {
                Change::Catalog(c) => {
                    if c.origin == server.instance || server.apply(&c) {
                        server.fanout.publish(c.list_change());
                    }
                }
                other => server.deliver(other),
            }
        }
        tracing::warn!("the notification bus ended; listen streams end with it");
        if let Some(server) = weak.upgrade() {
            server.replication.ended.cancel();
        }
    });
}

impl Server {
    /// Switches on a standby tool (see
    /// [`ServerBuilder::standby_tools`](crate::ServerBuilder::standby_tools)) on every
    /// instance sharing the bus; `Ok(false)` when it is served already here, `Err` when
    /// there is no standby tool by that name.
    pub fn enable_tool(&self, name: &str) -> Result<bool, BuildError> {
        let entry = self
            .inner
            .standby
            .tools
            .iter()
            .find(|t| t.def.item.name == name)
            .cloned()
            .ok_or_else(|| BuildError(vec![format!("there is no standby tool `{name}`")]))?;
        self.change(ItemKind::Tool, name, CatalogOp::Added, |e| {
            put(&mut e.tools, &entry, |t| t.def.item.name == name)
        })
    }

    /// Switches on a standby prompt on every instance sharing the bus.
    pub fn enable_prompt(&self, name: &str) -> Result<bool, BuildError> {
        let entry = self
            .inner
            .standby
            .prompts
            .iter()
            .find(|p| p.def.item.name == name)
            .cloned()
            .ok_or_else(|| BuildError(vec![format!("there is no standby prompt `{name}`")]))?;
        self.change(ItemKind::Prompt, name, CatalogOp::Added, |e| {
            put(&mut e.prompts, &entry, |p| p.def.item.name == name)
        })
    }

    /// Switches on a standby resource (by its URI or template) on every instance sharing
    /// the bus.
    pub fn enable_resource(&self, uri: &str) -> Result<bool, BuildError> {
        let entry = self
            .inner
            .standby
            .resources
            .iter()
            .find(|r| r.def.spec.uri == uri)
            .cloned()
            .ok_or_else(|| BuildError(vec![format!("there is no standby resource `{uri}`")]))?;
        self.change(ItemKind::Resource, uri, CatalogOp::Added, |e| {
            put(&mut e.resources, &entry, |r| r.def.spec.uri == uri)
        })
    }

    /// Applies `edit` here, then tells every instance sharing the bus (which apply it
    /// too) and every listener.
    pub(crate) fn change(
        &self,
        kind: ItemKind,
        name: &str,
        op: CatalogOp,
        edit: impl FnOnce(&mut Entries) -> bool,
    ) -> Result<bool, BuildError> {
        self.change_boxed(kind, name, op, Box::new(edit))
    }

    fn change_boxed(
        &self,
        kind: ItemKind,
        name: &str,
        op: CatalogOp,
        edit: Box<dyn FnOnce(&mut Entries) -> bool + '_>,
    ) -> Result<bool, BuildError> {
        let Some(at) = self.inner.rebuild((kind, name), Made::Here, edit)? else {
            return Ok(false);
        };
        let change = CatalogChange {
            at,
            ..CatalogChange::new(kind, name, op, self.inner.instance.as_str())
        };
        match &self.inner.bus {
            Some(bus) => bus.publish(Change::Catalog(change)),
            None => self.inner.fanout.publish(change.list_change()),
        }
        Ok(true)
    }
}

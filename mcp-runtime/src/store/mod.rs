//! What instances of one server share: the notification bus that carries changes to
//! listen streams and catalog changes between instances ([`NotificationBus`], with the
//! in-process [`LocalBus`]), the tasks of the tasks extension ([`TaskStore`], with
//! [`MemoryTaskStore`]), the values behind handles ([`HandleStore`] and the [`Handles`]
//! extractor, with [`MemoryHandleStore`]) and the redeemed single-use request states
//! ([`ReplayStore`], with [`MemoryReplayStore`]). With the `redis` feature,
//! [`redis::RedisStore`][redis] is all four, shared by a fleet.
//!
#![cfg_attr(feature = "redis", doc = "[redis]: redis::RedisStore")]
#![cfg_attr(not(feature = "redis"), doc = "[redis]: crate#features")]

mod bus;
mod handles;
mod replay;
mod task;

#[cfg(feature = "redis")]
pub mod redis;

pub(crate) use bus::stamp_after;
pub use bus::{CatalogChange, CatalogOp, Change, ItemKind, LocalBus, NotificationBus};
#[cfg(feature = "redis")]
pub(crate) use bus::{REPLAYED, unmarked};
pub(crate) use handles::HandleConfig;
pub use handles::{
    DEFAULT_HANDLE_TTL, DEFAULT_MAX_HANDLE_BYTES, DEFAULT_MAX_HANDLES, HandleError, HandleRecord,
    HandleStore, Handles, MemoryHandleStore,
};
pub use replay::{DEFAULT_MAX_REDEEMED, MemoryReplayStore, ReplayStore};
pub(crate) use task::now_ms;
pub use task::{
    DEFAULT_MAX_TASK_BYTES, DEFAULT_MAX_TASKS, MemoryTaskStore, StoreError, TaskChange, TaskRecord,
    TaskStore,
};

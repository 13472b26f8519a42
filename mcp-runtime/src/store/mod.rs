//! What instances of one server share: the notification bus that carries changes to
//! listen streams ([`NotificationBus`], with the in-process [`LocalBus`]) and the tasks of
//! the tasks extension ([`TaskStore`], with the in-process [`MemoryTaskStore`]).

mod bus;
mod task;

pub use bus::{Change, LocalBus, NotificationBus};
pub(crate) use task::now_ms;
pub use task::{DEFAULT_MAX_TASKS, MemoryTaskStore, StoreError, TaskChange, TaskRecord, TaskStore};

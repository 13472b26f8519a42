//! What instances of one server share: today the notification bus that carries changes
//! to listen streams ([`NotificationBus`], with the in-process [`LocalBus`]).

mod bus;

pub use bus::{Change, LocalBus, NotificationBus};

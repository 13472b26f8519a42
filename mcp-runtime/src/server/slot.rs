//! [`Slot`]: one unit of a counted resource (open listen streams, running tasks, requests
//! in flight, a connection's busy requests), given back when dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One counted unit; the count drops when it is dropped.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// Takes a unit, unless `max` are taken already.
    pub(crate) fn acquire(count: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(Arc::clone(count)))
    }

    /// Takes a unit whatever the count.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn enter(count: &Arc<AtomicUsize>) -> Slot {
        count.fetch_add(1, Ordering::AcqRel);
        Slot(Arc::clone(count))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_bounded_and_released() {
        let count = Arc::new(AtomicUsize::new(0));
        let a = Slot::acquire(&count, 2).unwrap();
        let _b = Slot::acquire(&count, 2).unwrap();
        assert!(Slot::acquire(&count, 2).is_none());
        drop(a);
        assert_eq!(count.load(Ordering::Acquire), 1);
        assert!(Slot::acquire(&count, 2).is_some());
        let _c = Slot::enter(&count);
        assert_eq!(count.load(Ordering::Acquire), 2);
    }
}

//! [`Slot`]: one unit of a counted resource (open listen streams, running tasks, requests
//! in flight, a connection's busy requests), given back when dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One counted unit; the count drops when it is dropped. A request's slot may also hold
/// bytes of a second count (the request bytes in flight), given back with it.
pub(crate) struct Slot {
    /// `None` once given back early ([`Slot::bytes_only`]).
    count: Option<Arc<AtomicUsize>>,
    /// The byte count this slot holds `.1` bytes of.
    bytes: Option<(Arc<AtomicUsize>, usize)>,
}

impl Slot {
    /// Takes a unit, unless `max` are taken already.
    pub(crate) fn acquire(count: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot::of(count))
    }

    /// Takes a unit whatever the count.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn enter(count: &Arc<AtomicUsize>) -> Slot {
        count.fetch_add(1, Ordering::AcqRel);
        Slot::of(count)
    }

    /// A slot of no unit, to hold bytes alone ([`Slot::weigh`]).
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn unitless() -> Slot {
        Slot {
            count: None,
            bytes: None,
        }
    }

    fn of(count: &Arc<AtomicUsize>) -> Slot {
        Slot {
            count: Some(Arc::clone(count)),
            bytes: None,
        }
    }

    /// Also holds `n` more bytes of `bytes`, unless that takes it past `max`; a slot that
    /// holds all of them (none held by others) may go past, so that one request larger
    /// than `max` alone is still served. `false` when refused (nothing taken).
    pub(crate) fn weigh(&mut self, bytes: &Arc<AtomicUsize>, n: usize, max: usize) -> bool {
        let mine = match &self.bytes {
            Some((_, held)) => *held,
            None => 0,
        };
        let taken = bytes.fetch_update(Ordering::AcqRel, Ordering::Acquire, |cur| {
            (cur.saturating_add(n) <= max || cur == mine).then(|| cur.saturating_add(n))
        });
        if taken.is_err() {
            return false;
        }
        match &mut self.bytes {
            Some((_, held)) => *held += n,
            None => self.bytes = Some((Arc::clone(bytes), n)),
        }
        true
    }

    /// Gives the unit back now and keeps the bytes (a batch, whose calls take units of
    /// their own while the batch's bytes stay in memory).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn bytes_only(mut self) -> Slot {
        if let Some(count) = self.count.take() {
            count.fetch_sub(1, Ordering::AcqRel);
        }
        self
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(count) = &self.count {
            count.fetch_sub(1, Ordering::AcqRel);
        }
        if let Some((bytes, n)) = &self.bytes {
            bytes.fetch_sub(*n, Ordering::AcqRel);
        }
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

    #[test]
    fn bytes_are_bounded_released_and_one_large_request_passes_alone() {
        let count = Arc::new(AtomicUsize::new(0));
        let bytes = Arc::new(AtomicUsize::new(0));
        let mut a = Slot::enter(&count);
        let mut b = Slot::enter(&count);
        assert!(a.weigh(&bytes, 60, 100));
        assert!(a.weigh(&bytes, 30, 100), "more for the same slot");
        assert!(
            !b.weigh(&bytes, 20, 100),
            "past the limit while others hold bytes"
        );
        assert!(b.weigh(&bytes, 10, 100));
        assert_eq!(bytes.load(Ordering::Acquire), 100);
        drop(a);
        assert_eq!(bytes.load(Ordering::Acquire), 10);
        drop(b);
        assert_eq!(bytes.load(Ordering::Acquire), 0);
        // Alone, a request may hold more than the limit.
        let mut big = Slot::enter(&count);
        assert!(big.weigh(&bytes, 500, 100));
        assert!(big.weigh(&bytes, 500, 100), "still alone");
        let mut other = Slot::enter(&count);
        assert!(!other.weigh(&bytes, 1, 100));
        drop(big);
        assert!(other.weigh(&bytes, 1, 100));
        drop(other);
        assert_eq!(bytes.load(Ordering::Acquire), 0);
        assert_eq!(count.load(Ordering::Acquire), 0);
        // The unit given back early, the bytes kept to the end.
        let mut batch = Slot::enter(&count);
        assert!(batch.weigh(&bytes, 50, 100));
        let batch = batch.bytes_only();
        assert_eq!(count.load(Ordering::Acquire), 0);
        assert_eq!(bytes.load(Ordering::Acquire), 50);
        drop(batch);
        assert_eq!(bytes.load(Ordering::Acquire), 0);
    }
}

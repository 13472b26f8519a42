//! A request's time limit, armed only when it is needed.
//!
//! Most handlers finish in their first poll; `tokio::time::timeout` still costs each of
//! them a clock read, a runtime handle and a timer entry. [`Limited`] reads the clock at
//! the first poll and makes the timer only if the future is still pending after it,
//! counting the limit from that first poll.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::task::coop;
use tokio::time::{Instant, Sleep};

/// `fut` under `limit`: `None` once the limit has passed with `fut` still pending.
pub(crate) struct Limited<F> {
    fut: F,
    limit: Duration,
    deadline: Deadline,
}

enum Deadline {
    /// Not polled yet.
    Unset,
    /// Polled once, from this instant; no timer yet.
    From(Instant),
    /// Pending after its first poll: the timer.
    Armed(Pin<Box<Sleep>>),
    /// The limit is too far to be reached.
    Never,
}

impl<F: Future + Unpin> Limited<F> {
    pub(crate) fn new(limit: Duration, fut: F) -> Self {
        Limited {
            fut,
            limit,
            deadline: Deadline::Unset,
        }
    }
}

impl<F: Future + Unpin> Future for Limited<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Deadline::Unset = this.deadline {
            this.deadline = Deadline::From(Instant::now());
        }
        let had_budget = coop::has_budget_remaining();
        if let Poll::Ready(out) = Pin::new(&mut this.fut).poll(cx) {
            return Poll::Ready(Some(out));
        }
        if let Deadline::From(start) = this.deadline {
            this.deadline = match start.checked_add(this.limit) {
                Some(at) => Deadline::Armed(Box::pin(tokio::time::sleep_until(at))),
                None => Deadline::Never,
            };
        }
        let Deadline::Armed(sleep) = &mut this.deadline else {
            return Poll::Pending;
        };
        // A future that used up the task's budget would otherwise keep the timer from
        // ever being seen to expire (a polled timer answers `Pending` without budget).
        let expired = if had_budget && !coop::has_budget_remaining() {
            Pin::new(&mut coop::unconstrained(sleep.as_mut())).poll(cx)
        } else {
            sleep.as_mut().poll(cx)
        };
        expired.map(|()| None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    /// A handler that only ever yields through the cooperative budget (a long computation
    /// calling `consume_budget`) is still cut off at the limit.
    #[tokio::test]
    async fn a_future_that_uses_up_the_budget_still_times_out() {
        let spin = async {
            loop {
                coop::consume_budget().await;
            }
        };
        let limited = Limited::new(Duration::from_millis(50), Box::pin(spin));
        let out = tokio::time::timeout(Duration::from_secs(5), limited).await;
        assert!(matches!(out, Ok(None)), "the limit did not fire");
    }

    #[tokio::test(start_paused = true)]
    async fn the_limit_counts_from_the_first_poll() {
        let limit = Duration::from_secs(10);
        // Finishes in its first poll: no timer is made.
        let mut now = Limited::new(limit, std::future::ready(7));
        assert_eq!((&mut now).await, Some(7));
        assert!(matches!(now.deadline, Deadline::From(_)));
        // Finishes within the limit.
        let ok = Limited::new(limit, tokio::time::sleep(Duration::from_secs(9)).boxed());
        assert_eq!(ok.await, Some(()));
        // Still pending at the limit, counted from its first poll, not from a later one.
        let start = Instant::now();
        let mut slow = Limited::new(limit, std::future::pending::<()>());
        assert!((&mut slow).now_or_never().is_none());
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(slow.await, None);
        assert_eq!(start.elapsed(), limit);
        // A limit too far to reach never fires.
        let far = Limited::new(Duration::MAX, std::future::pending::<()>());
        let waited = tokio::time::timeout(Duration::from_secs(3600), far).await;
        assert!(waited.is_err());
    }
}

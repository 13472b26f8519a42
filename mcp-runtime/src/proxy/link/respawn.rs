//! A stdio upstream whose child ended, started again: on the next request after it
//! exited, a new child is started (when the link knows how: [`Spawn`]) and the handshake
//! is done again, as on the first connect; the change streams are asked for again and
//! followers told ([`Changes::started`](super::super::routing::Changes)), so they read
//! the lists again. A child that keeps exiting soon after it started is started again
//! only after a wait ([`Backoff`]): 1 s, doubling up to 30 s, and none once a run lasted
//! [`HEALTHY`].

use super::stdio::{Pipes, Session};
use super::{Link, UpstreamError, Wire, gone};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How to start the upstream again: a new child (or, in tests, a new pipe).
pub(crate) type Spawn = Arc<dyn Fn() -> Result<Pipes, UpstreamError> + Send + Sync>;

/// The first wait before a child that exited soon after it started is started again.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait.
const LONGEST_WAIT: Duration = Duration::from_secs(30);
/// A run this long is healthy: when it ends, the child is started again at once.
const HEALTHY: Duration = Duration::from_secs(30);

/// A stdio upstream: the session now, and how to start another when it ended.
pub(crate) struct Stdio {
    current: Mutex<Arc<Session>>,
    again: Option<Again>,
    /// How long it may stay silent on a request.
    pub(crate) patience: Duration,
    /// Its program, for logs.
    pub(crate) program: String,
}

/// How a stdio upstream is started again, and when it may be.
struct Again {
    spawn: Spawn,
    /// Held while a start is tried, so there is one at a time.
    backoff: tokio::sync::Mutex<Backoff>,
}

impl Stdio {
    /// The wire of `first` (a session open), started again with `again` when it ends, if
    /// given.
    pub(crate) fn new(
        first: Arc<Session>,
        again: Option<Spawn>,
        patience: Duration,
        program: String,
    ) -> Stdio {
        Stdio {
            current: Mutex::new(first),
            again: again.map(|spawn| Again {
                spawn,
                backoff: tokio::sync::Mutex::new(Backoff::default()),
            }),
            patience,
            program,
        }
    }

    /// The session now, open or not.
    pub(crate) fn now(&self) -> Arc<Session> {
        Arc::clone(&self.current.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Link {
    /// The stdio session now, open or not (`None` over HTTP).
    pub(crate) fn live(&self) -> Option<Arc<Session>> {
        match &self.wire {
            Wire::Stdio(stdio) => Some(stdio.now()),
            Wire::Http(_) => None,
        }
    }

    /// The stdio session to send on: the one now while it runs; once it ended, a new run
    /// of the child with its handshake done, when the link can start one and its backoff
    /// lets it (else why not).
    pub(crate) async fn session(&self) -> Result<Arc<Session>, UpstreamError> {
        let Wire::Stdio(stdio) = &self.wire else {
            return Err(gone("not a stdio upstream"));
        };
        let now = stdio.now();
        if now.is_open() {
            return Ok(now);
        }
        let Some(again) = &stdio.again else {
            return Err(gone(format!("{}; it is not started again", now.gone())));
        };
        let mut backoff = again.backoff.lock().await;
        // Started again by another request while this one waited?
        let now = stdio.now();
        if now.is_open() {
            return Ok(now);
        }
        if self.dropped.is_cancelled() {
            return Err(now.gone());
        }
        backoff.ended(now.started, now.end(), Instant::now());
        if let Err(wait) = backoff.may_start(Instant::now()) {
            return Err(gone(format!(
                "the upstream server is down ({}), and is started again in {:.1} s at the earliest (it did not stay up after its last start)",
                backoff.why,
                wait.as_secs_f64()
            )));
        }
        backoff.starting();
        match self.start_again(stdio, &again.spawn).await {
            Ok(session) => Ok(session),
            Err(e) => {
                backoff.failed(Instant::now(), e.to_string());
                tracing::warn!(
                    program = %stdio.program,
                    "the upstream server could not be started again ({e}); next try in {} s at the earliest",
                    backoff.wait.as_secs()
                );
                Err(e)
            }
        }
    }

    /// A new run of the child: started, its handshake done (it must speak the revision
    /// the link speaks, for which the items served were made), made the session now, its
    /// change streams asked for again, and followers told.
    async fn start_again(
        &self,
        stdio: &Stdio,
        spawn: &Spawn,
    ) -> Result<Arc<Session>, UpstreamError> {
        let pipes = spawn().map_err(|e| gone(format!("starting it again: {e}")))?;
        let session = Session::open(pipes, &self.changes, &self.dropped, &stdio.program);
        // Given up before it is the session now (failed, or this future dropped), it ends.
        let unkept = Unkept(Some(Arc::clone(&session)));
        let (version, hello) = self
            .handshake(Some(&session))
            .await
            .map_err(|e| gone(format!("started again, its handshake failed: {e}")))?;
        if version != self.version {
            return Err(gone(format!(
                "started again, it speaks revision {version}, not {} as when it was connected",
                self.version
            )));
        }
        *self.hello.write().unwrap_or_else(|e| e.into_inner()) = hello;
        // Its resource streams were the last run's.
        self.watching
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        *stdio.current.lock().unwrap_or_else(|e| e.into_inner()) = Arc::clone(&session);
        unkept.keep();
        self.listen(Some(&session)).await;
        self.changes.started_again();
        tracing::info!(program = %stdio.program, version = %version, "the upstream server was started again");
        Ok(session)
    }
}

/// A session being started, ended if it is dropped before [`Unkept::keep`].
struct Unkept(Option<Arc<Session>>);

impl Unkept {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for Unkept {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.close("it was given up while starting");
        }
    }
}

/// When a stdio upstream that ended may be started again.
#[derive(Debug)]
pub(crate) struct Backoff {
    /// How long after the end of an unhealthy run (or a failed start) the next start
    /// waits: none at first and after a healthy run, then [`FIRST_WAIT`], doubling up to
    /// [`LONGEST_WAIT`] with each start.
    wait: Duration,
    /// When the last run or start ended; `None` while the last one started runs (its end
    /// not counted yet).
    ended: Option<Instant>,
    /// How the last run or start ended.
    why: String,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            wait: Duration::ZERO,
            ended: None,
            why: String::new(),
        }
    }
}

impl Backoff {
    /// The run now, begun at `started`, ended (`end`: when and how, if it says; else
    /// `now`): counted once (a healthy run lets the next start come at once).
    fn ended(&mut self, started: Instant, end: Option<(Instant, String)>, now: Instant) {
        if self.ended.is_some() {
            return;
        }
        let (at, why) = end.unwrap_or_else(|| (now, "it ended".to_owned()));
        if at.saturating_duration_since(started) >= HEALTHY {
            self.wait = Duration::ZERO;
        }
        self.ended = Some(at);
        self.why = why;
    }

    /// A start tried failed at `at` (`why`).
    fn failed(&mut self, at: Instant, why: String) {
        self.ended = Some(at);
        self.why = why;
    }

    /// Whether a start may be tried at `now`; if not, how long until it may.
    fn may_start(&self, now: Instant) -> Result<(), Duration> {
        match self.ended {
            Some(at) if now < at + self.wait => Err(at + self.wait - now),
            _ => Ok(()),
        }
    }

    /// A start is tried: the next unhealthy end waits longer.
    fn starting(&mut self) {
        self.wait = if self.wait.is_zero() {
            FIRST_WAIT
        } else {
            (self.wait * 2).min(LONGEST_WAIT)
        };
        self.ended = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_keeps_exiting_waits_longer_each_time_and_not_after_a_healthy_run() {
        let mut b = Backoff::default();
        let mut t = Instant::now();
        let ms = Duration::from_millis;
        // A run of `lived` from `t`, ended: `t` moves to its end.
        let run = |b: &mut Backoff, t: &mut Instant, lived: Duration| {
            let started = *t;
            *t += lived;
            b.ended(started, Some((*t, "exit status: 3".into())), *t);
        };
        // The first run ends, however soon: started again at once.
        run(&mut b, &mut t, ms(10));
        assert_eq!(b.may_start(t), Ok(()));
        let mut waits = Vec::new();
        for _ in 0..8 {
            b.starting();
            run(&mut b, &mut t, ms(10));
            let wait = b.may_start(t).unwrap_err();
            waits.push(wait.as_secs());
            assert!(b.may_start(t + wait - ms(1)).is_err());
            // Counted once: asked again, the same end.
            b.ended(t, None, t + wait);
            assert_eq!(b.may_start(t + wait), Ok(()));
            t += wait;
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(b.why, "exit status: 3");
        // A healthy run: at once again, then 1 s.
        b.starting();
        run(&mut b, &mut t, HEALTHY);
        assert_eq!(b.may_start(t), Ok(()));
        b.starting();
        run(&mut b, &mut t, Duration::ZERO);
        assert_eq!(b.may_start(t).map_err(|w| w.as_secs()), Err(1));
        // A start that fails counts as an unhealthy run, however long it took.
        b.starting();
        t += Duration::from_secs(60);
        b.failed(t, "its handshake failed".into());
        assert_eq!(b.may_start(t).map_err(|w| w.as_secs()), Err(2));
        assert_eq!(b.why, "its handshake failed");
    }
}

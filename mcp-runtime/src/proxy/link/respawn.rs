//! A stdio upstream whose child ended, started again: on the next request after it
//! exited, a new child is started (when the link knows how: [`Spawn`]), once the last
//! one is gone with its process group (a child whose stdout ended is given a moment to
//! exit, then killed: never two runs at once), and the handshake is done again, as on
//! the first connect; the change streams are asked for again and
//! followers told ([`Changes::started`](super::super::routing::Changes)), so they read
//! the lists again. A child that keeps exiting soon after it started is started again
//! only after a wait ([`Backoff`]): 1 s, doubling up to 30 s, and none once a run lasted
//! [`HEALTHY`].

use super::stdio::{Pipes, Session};
use super::{Link, UpstreamError, Wire, gone, handshake_on};
use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use serde_json::Value;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How to start the upstream again: a new child (or, in tests, a new pipe).
pub(crate) type Spawn = Arc<dyn Fn() -> Result<Pipes, UpstreamError> + Send + Sync>;

/// The first wait before a child that exited soon after it started is started again.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait.
const LONGEST_WAIT: Duration = Duration::from_secs(30);
/// A run this long is healthy: when it ends, the child is started again at once.
const HEALTHY: Duration = Duration::from_secs(30);
/// How long a start waits for the last run's child to be gone (it is given a moment to
/// exit, then killed, and reaped): a child the kernel holds up does not hold the start
/// for good.
const GONE_WITHIN: Duration = Duration::from_secs(5);

/// A stdio upstream: the session now, and how to start another when it ended.
pub(crate) struct Stdio {
    current: Mutex<Arc<Session>>,
    again: Option<Again>,
    /// How long it may stay silent on a request.
    pub(crate) patience: Duration,
    /// How long a write to its stdin may make no progress before it is taken for gone
    /// (`None`: as long as it takes).
    stall: Option<Duration>,
    /// Its program, for logs.
    pub(crate) program: String,
}

/// A start under way (in a task of its own), shared by the requests that wait for it.
type Starting = Shared<BoxFuture<'static, Result<Started, UpstreamError>>>;

/// A new run of the child, its handshake done, not yet the session now.
#[derive(Clone)]
struct Started {
    session: Arc<Session>,
    version: String,
    hello: Value,
}

/// How a stdio upstream is started again, and when it may be.
struct Again {
    spawn: Spawn,
    /// Never held across an await.
    state: Arc<Mutex<Restart>>,
}

#[derive(Default)]
struct Restart {
    backoff: Backoff,
    /// The start under way (or done, not yet made the session now): one at a time.
    starting: Option<Starting>,
    /// Cancelled once the child of the last run started (made the session now or not)
    /// is gone; `None` before the first start (then the session now's says).
    last: Option<CancellationToken>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Stdio {
    /// The wire of `first` (a session open), started again with `again` when it ends, if
    /// given; each run's writes have the stall limit `stall`.
    pub(crate) fn new(
        first: Arc<Session>,
        again: Option<Spawn>,
        patience: Duration,
        stall: Option<Duration>,
        program: String,
    ) -> Stdio {
        Stdio {
            current: Mutex::new(first),
            again: again.map(|spawn| Again {
                spawn,
                state: Arc::default(),
            }),
            patience,
            stall,
            program,
        }
    }

    /// The session now, open or not.
    pub(crate) fn now(&self) -> Arc<Session> {
        Arc::clone(&lock(&self.current))
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

    /// Whether this is a stdio upstream whose child ended and is not started again (no
    /// request can reach it any more).
    pub(crate) fn gone_for_good(&self) -> bool {
        match &self.wire {
            Wire::Stdio(stdio) => stdio.again.is_none() && !stdio.now().is_open(),
            Wire::Http(_) => false,
        }
    }

    /// The stdio session to send on: the one now while it runs; once it ended, a new run
    /// of the child with its handshake done, when the link can start one and its backoff
    /// lets it (else why not). The start runs in a task of its own, which the requests
    /// that come meanwhile wait for too: a request given up while it waits (its time ran
    /// out, or its caller went) leaves it going, and a start that fails counts for the
    /// backoff whoever waited.
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
        let starting = {
            let mut state = lock(&again.state);
            // Started again by another request meanwhile?
            let now = stdio.now();
            if now.is_open() {
                return Ok(now);
            }
            match &state.starting {
                Some(starting) => starting.clone(),
                None => {
                    let backoff = &mut state.backoff;
                    backoff.ended(now.started, now.end(), Instant::now());
                    if let Err(wait) = backoff.may_start(Instant::now()) {
                        return Err(gone(format!(
                            "the upstream server is down ({}), and is started again in {:.1} s at the earliest (it did not stay up after its last start)",
                            backoff.why,
                            wait.as_secs_f64()
                        )));
                    }
                    backoff.starting();
                    let last = state.last.clone().unwrap_or_else(|| now.child_gone.clone());
                    let starting = self.start_again(stdio, again, last);
                    state.starting = Some(starting.clone());
                    starting
                }
            }
        };
        let started = starting.clone().await?;
        Ok(self.install(stdio, again, &starting, started).await)
    }

    /// Starts a new run of the child in a task of its own, once the last run's child is
    /// gone (`last` cancelled: within [`GONE_WITHIN`], else it is told at warn), so that
    /// two never run at once: started, its handshake done (it must speak the revision
    /// the link speaks, for which the items served were made). A start that fails is
    /// counted by the backoff and told at warn.
    fn start_again(&self, stdio: &Stdio, again: &Again, last: CancellationToken) -> Starting {
        let spawn = Arc::clone(&again.spawn);
        let state = Arc::clone(&again.state);
        let changes = Arc::clone(&self.changes);
        let dropped = self.dropped.clone();
        let program = stdio.program.clone();
        // Its logs name the mount the last run's did (a call tells the new run's later).
        let mount = stdio.now().told.mount().map(str::to_owned);
        let next = Arc::clone(&self.next);
        let (patience, stall, version) = (stdio.patience, stdio.stall, self.version.clone());
        let task = tokio::spawn(async move {
            let start = async {
                if tokio::time::timeout(GONE_WITHIN, last.cancelled())
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        program = %program,
                        "the upstream server's last run (its child, or what its process group started) is not gone after {} s; started again all the same",
                        GONE_WITHIN.as_secs()
                    );
                }
                let pipes = spawn().map_err(|e| gone(format!("starting it again: {e}")))?;
                let session = Session::open(pipes, &changes, &dropped, &program, stall);
                session.told.mounted_as(mount);
                lock(&state).last = Some(session.child_gone.clone());
                run(session, &next, patience, &version).await
            };
            let started = tokio::select! {
                s = start => s,
                () = dropped.cancelled() => Err(gone("the link went while it was started again")),
            };
            if let Err(e) = &started {
                let mut state = lock(&state);
                state.backoff.failed(Instant::now(), e.to_string());
                state.starting = None;
                tracing::warn!(
                    program = %program,
                    "the upstream server could not be started again ({e}); next try in {} s at the earliest",
                    state.backoff.wait.as_secs()
                );
            }
            started
        });
        let program = stdio.program.clone();
        async move {
            task.await.unwrap_or_else(|e| {
                // A panic's message is the gateway's, not for clients.
                tracing::warn!(program = %program, "starting the upstream server again ended: {e}");
                Err(gone(if e.is_panic() {
                    "starting it again failed (a panic)"
                } else {
                    "starting it again was cancelled"
                }))
            })
        }
        .boxed()
        .shared()
    }

    /// Makes `started` (what `starting` gave) the session now, unless another request
    /// did already: what its handshake said is kept, followers are told, and its change
    /// streams are asked for again.
    async fn install(
        &self,
        stdio: &Stdio,
        again: &Again,
        starting: &Starting,
        started: Started,
    ) -> Arc<Session> {
        let fresh = {
            let mut state = lock(&again.state);
            let fresh = state.starting.as_ref().is_some_and(|s| s.ptr_eq(starting));
            if fresh {
                state.starting = None;
                *self.hello.write().unwrap_or_else(|e| e.into_inner()) = started.hello;
                // Its resource streams were the last run's.
                lock(&self.watching).take();
                *lock(&stdio.current) = Arc::clone(&started.session);
                // Told before anything is awaited: a request given up below still did.
                self.changes.started_again();
            }
            fresh
        };
        if fresh {
            tracing::info!(program = %stdio.program, version = %started.version, "the upstream server was started again");
            self.listen(Some(&started.session)).await;
        }
        started.session
    }
}

/// A new run on `session`: its handshake done, in `version` (ids from `next`, each
/// request in `patience`). Failed, it ends, with a short reason (which the requests that
/// waited for it, and those refused while its backoff waits, are told): what the child
/// said (its error's message, the revision it named) goes to the log
/// ([`Told::tell`](super::Told::tell)).
async fn run(
    session: Arc<Session>,
    next: &AtomicU64,
    patience: Duration,
    version: &str,
) -> Result<Started, UpstreamError> {
    // Given up before it is kept (failed, or the link went), it ends.
    let unkept = Unkept(Some(Arc::clone(&session)));
    let (spoken, hello) = handshake_on(&session, next, patience).await.map_err(|e| {
        session
            .told
            .tell(format_args!("started again, its handshake failed: {e}"));
        handshake_failed(&e)
    })?;
    if spoken != version {
        session.told.tell(format_args!(
            "started again, it speaks revision {}, not {version} as when it was connected",
            super::excerpt(spoken.as_bytes())
        ));
        return Err(gone(format!(
            "started again, it speaks a revision other than {version}, which it spoke when \
             it was connected"
        )));
    }
    unkept.keep();
    Ok(Started {
        session,
        version: spoken,
        hello,
    })
}

/// What a client is told of a child started again whose handshake failed with `e`: a
/// fixed reason, never the child's words (an error's message); an `Unavailable`'s text
/// is already one (how the child exited, say).
fn handshake_failed(e: &UpstreamError) -> UpstreamError {
    match e {
        UpstreamError::Rpc { .. } => {
            gone("started again, its handshake failed (it answered an error)")
        }
        UpstreamError::Timeout => {
            gone("started again, its handshake failed (no answer within its time limit)")
        }
        UpstreamError::Unavailable(why) => {
            gone(format!("started again, its handshake failed: {why}"))
        }
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
    /// How the last run or start ended: a short reason, which the requests refused
    /// while it waits are told (never the child's own words).
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

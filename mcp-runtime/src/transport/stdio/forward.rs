//! The stdio forwarder: what writes queued lines to stdout and ends the connection, and
//! how `serve_stdio` starts it (on the first queued line, or when its future is dropped).

use super::dispatch::Dispatch;
use super::stdout::{self, StdOut};
use super::{Panic, Sink, wind_down};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What forwards queued lines to stdout and ends the connection.
pub(super) struct Forwarder {
    pub(super) out: Arc<Mutex<StdOut>>,
    pub(super) dispatch: Arc<Dispatch>,
    /// Tells the reading thread to stop.
    pub(super) stop: Arc<AtomicBool>,
    /// The reading thread's end: `Some` carries its panic.
    pub(super) done: tokio::sync::oneshot::Receiver<Option<Panic>>,
    pub(super) shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
}

/// What the forwarder met: how its task starts, and each step of its loop.
pub(super) enum Start {
    /// Forwarding: the first queued lines were written (or stdout failed).
    Forwarded(io::Result<()>),
    /// SIGINT or SIGTERM came first.
    Shutdown,
    /// The reading thread ended first (with its panic, if it panicked).
    Ended(Option<Panic>),
    /// Forwarding, nothing written yet.
    Running,
}

impl Forwarder {
    /// Waits for the next thing to do: a queued line (written here, under the lock that
    /// keeps it behind what came before it), the end of input or a signal. `serve_stdio`
    /// waits for the first on its own thread, the forwarder's task for the others.
    pub(super) async fn next(&mut self) -> Start {
        tokio::select! {
            biased;
            () = &mut self.shutdown => Start::Shutdown,
            ended = &mut self.done => Start::Ended(ended.ok().flatten()),
            written = stdout::forward(&self.out) => Start::Forwarded(written),
        }
    }

    /// Forwards queued lines until the end of input, a signal or a closed stdout, then
    /// winds the connection down. The panic to pass on, if the reading thread panicked.
    pub(super) async fn run(mut self, mut step: Start) -> Option<Panic> {
        let panic = loop {
            match step {
                Start::Forwarded(Ok(())) | Start::Running => step = self.next().await,
                Start::Forwarded(Err(e)) => {
                    tracing::debug!("stdout closed: {e}");
                    break None;
                }
                Start::Shutdown => break None,
                Start::Ended(ended) => break ended,
            }
        };
        self.stop.store(true, Ordering::Release);
        wind_down(&self.dispatch, &mut Sink::Shared(&self.out)).await;
        // A handler's blocking section cannot be stopped, and the runtime waits for it
        // when dropped: the process would outlive its client by as long as the section
        // runs (forever, for one that never returns). The requests are over and stdout
        // is flushed, so it exits now.
        let running = self.dispatch.sections_running();
        if running > 0 && panic.is_none() {
            tracing::warn!(
                "{running} blocking handler section(s) still running after the drain; exiting without waiting for them"
            );
            std::process::exit(0);
        }
        panic
    }
}

/// The forwarder while `serve_stdio` waits for its first work. Dropped with that future
/// (an application that stops awaiting it) before it started, it starts now, as a task:
/// the reading thread still serves, and what is queued still reaches stdout.
pub(super) struct Unstarted(pub(super) Option<Forwarder>);

impl Drop for Unstarted {
    fn drop(&mut self) {
        let Some(forwarder) = self.0.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(forwarder.run(Start::Running))),
            Err(_) => forwarder.stop.store(true, Ordering::Release),
        }
    }
}

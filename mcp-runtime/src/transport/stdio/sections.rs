//! The blocking sections a stdio connection's requests started: counted, so that
//! `serve_stdio` can end the process after its drain rather than wait for them (tokio's
//! runtime would, when dropped), and only for them.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

tokio::task_local! {
    /// The count of the connection whose request this task (or poll) runs.
    static SECTIONS: Arc<AtomicUsize>;
}

/// One connection's count of the blocking sections its requests started.
#[derive(Default)]
pub(super) struct Sections(Arc<AtomicUsize>);

impl Sections {
    /// `fut`, its blocking sections counted here.
    pub(super) fn scope<F: Future>(&self, fut: F) -> impl Future<Output = F::Output> + use<F> {
        SECTIONS.scope(Arc::clone(&self.0), fut)
    }

    /// `f`, its blocking sections counted here (a request's first poll, made in place).
    pub(super) fn sync_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        SECTIONS.sync_scope(Arc::clone(&self.0), f)
    }

    /// How many are running.
    pub(super) fn running(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

/// A blocking section ([`crate::blocking`], a plain `fn` handler, `SafePath::read_under`)
/// counted, while it lives, by the stdio connection whose request started it (none when
/// it was started elsewhere: by an HTTP request, a task of the handler's own, the
/// application).
pub(crate) struct Section(Option<Arc<AtomicUsize>>);

impl Section {
    /// `fut`, counting the blocking sections it starts where the code spawning it counts
    /// them: for what the runtime spawns on a request's behalf (a task's worker), which a
    /// plain spawn would leave uncounted.
    pub(crate) fn inherit<F: Future>(fut: F) -> impl Future<Output = F::Output> {
        SECTIONS.scope(SECTIONS.try_with(Arc::clone).unwrap_or_default(), fut)
    }

    pub(crate) fn enter() -> Self {
        let count = SECTIONS.try_with(Arc::clone).ok();
        if let Some(c) = &count {
            c.fetch_add(1, Ordering::AcqRel);
        }
        Section(count)
    }
}

impl Drop for Section {
    fn drop(&mut self) {
        if let Some(c) = &self.0 {
            c.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

//! Transports: they turn bytes into messages for `server` and its answers back into bytes.

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "stdio")]
pub mod stdio;

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) async fn shutdown_signal() {
    let _ = termination().await;
}

/// Which signal asked the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// SIGINT (Ctrl-C): someone at a terminal; stop now.
    Interrupt,
    /// SIGTERM: an orchestrator; stop gracefully (lame duck first).
    #[cfg_attr(not(unix), allow(dead_code))]
    Terminate,
}

/// Resolves on SIGINT or SIGTERM, saying which.
pub(crate) async fn termination() -> Signal {
    let signal = received().await;
    tracing::info!(?signal, "shutdown signal received");
    signal
}

/// The first of SIGINT and SIGTERM to arrive while this waits. Each is written to a
/// socket of this call's (`signal_hook`'s handler writes a byte to it) that the runtime
/// polls; this call's actions are removed when it ends. The process's handler stays
/// installed, as tokio's does: a signal that comes when nothing waits is ignored, not
/// fatal. A signal that cannot be watched (out of descriptors) is warned about and never
/// arrives; the other still does.
#[cfg(unix)]
async fn received() -> Signal {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let watch = |signal, name| {
        Watch::new(signal)
            .inspect_err(|e| tracing::warn!("cannot watch for {name}: {e}"))
            .ok()
    };
    let (int, term) = (watch(SIGINT, "SIGINT"), watch(SIGTERM, "SIGTERM"));
    tokio::select! {
        () = Watch::arrival(int.as_ref()) => Signal::Interrupt,
        () = Watch::arrival(term.as_ref()) => Signal::Terminate,
    }
}

#[cfg(not(unix))]
async fn received() -> Signal {
    let _ = tokio::signal::ctrl_c().await;
    Signal::Interrupt
}

/// One signal, written to a socket while this lives.
#[cfg(unix)]
struct Watch {
    socket: tokio::net::UnixStream,
    id: signal_hook::SigId,
}

#[cfg(unix)]
impl Watch {
    fn new(signal: std::ffi::c_int) -> std::io::Result<Watch> {
        let (read, write) = std::os::unix::net::UnixStream::pair()?;
        read.set_nonblocking(true)?;
        // The handler owns `write` from here, and closes it when unregistered.
        let id = signal_hook::low_level::pipe::register(signal, write)?;
        match tokio::net::UnixStream::from_std(read) {
            Ok(socket) => Ok(Watch { socket, id }),
            Err(e) => {
                signal_hook::low_level::unregister(id);
                Err(e)
            }
        }
    }

    /// Resolves when the signal arrives; never, for no watch (or a socket the runtime
    /// can no longer poll).
    async fn arrival(watch: Option<&Watch>) {
        match watch {
            Some(w) if w.socket.readable().await.is_ok() => {}
            _ => std::future::pending().await,
        }
    }
}

#[cfg(unix)]
impl Drop for Watch {
    fn drop(&mut self) {
        signal_hook::low_level::unregister(self.id);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use signal_hook::consts::{SIGINT, SIGTERM};
    use std::time::Duration;

    /// Each signal, raised in this process while `received` waits, ends the wait with
    /// its name; a later wait sets its handlers again and sees the signal raised for it.
    #[tokio::test]
    async fn received_says_which_signal_came() {
        for (raised, expected) in [
            (SIGTERM, Signal::Terminate),
            (SIGINT, Signal::Interrupt),
            (SIGTERM, Signal::Terminate),
        ] {
            let mut wait = Box::pin(received());
            // Polled once: the handlers are set.
            assert!(futures_util::poll!(&mut wait).is_pending());
            signal_hook::low_level::raise(raised).unwrap();
            let got = tokio::time::timeout(Duration::from_secs(5), wait).await;
            assert_eq!(got.ok(), Some(expected), "after signal {raised}");
        }
    }

    /// A watch's action is removed when the watch is dropped.
    #[tokio::test]
    async fn a_dropped_watch_leaves_no_action_behind() {
        let watch = Watch::new(SIGTERM).unwrap();
        let id = watch.id;
        drop(watch);
        assert!(
            !signal_hook::low_level::unregister(id),
            "the action was still registered"
        );
    }
}

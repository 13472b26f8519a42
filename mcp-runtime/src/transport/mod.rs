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
    Terminate,
}

/// Resolves on SIGINT or SIGTERM, saying which.
pub(crate) async fn termination() -> Signal {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    let signal = tokio::select! {
        () = ctrl_c => Signal::Interrupt,
        () = term => Signal::Terminate,
    };
    tracing::info!(?signal, "shutdown signal received");
    signal
}

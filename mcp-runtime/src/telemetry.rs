//! Logging setup: `tracing` to stderr, filtered by `RUST_LOG`.

/// Installs a `tracing` subscriber writing to **stderr** (stdout belongs to the stdio
/// transport), filtered by `RUST_LOG` (default `info`). Does nothing if a global subscriber
/// is already set, so calling it more than once is harmless.
pub fn init() {
    use tracing_subscriber::{EnvFilter, fmt};
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

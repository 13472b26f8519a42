//! Logging setup: `tracing` to stderr, filtered by `RUST_LOG`.

use tracing_subscriber::filter::{LevelFilter, Targets};

/// Installs a `tracing` subscriber writing to **stderr** (stdout belongs to the stdio
/// transport), filtered by `RUST_LOG` (default `info`). Does nothing if a global subscriber
/// is already set, so calling it more than once is harmless.
///
/// `RUST_LOG` is a comma-separated list of `level` and `target=level` directives
/// (`warn,mcp_runtime=debug`), read as [`Targets`]. A value that does not parse is reported
/// on stderr and `info` used. Filters on spans or fields (`[span{field=x}]`) need a
/// subscriber of your own, such as `tracing_subscriber::EnvFilter`, installed instead.
pub fn init() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref());
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(filter)
        .try_init();
}

/// The filter `RUST_LOG` asks for.
fn filter(var: Option<&str>) -> Targets {
    let info = || Targets::new().with_default(LevelFilter::INFO);
    match var.map(str::trim) {
        None | Some("") => info(),
        Some(directives) => directives.parse().unwrap_or_else(|e| {
            eprintln!("RUST_LOG={directives:?} is not understood ({e}); logging at info");
            info()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    #[test]
    fn rust_log_is_read_as_targets() {
        let f = filter(None);
        assert!(f.would_enable("anything", &Level::INFO));
        assert!(!f.would_enable("anything", &Level::DEBUG));
        let f = filter(Some("warn,mcp_runtime=debug"));
        assert!(f.would_enable("mcp_runtime::server", &Level::DEBUG));
        assert!(!f.would_enable("hyper", &Level::INFO));
        assert!(f.would_enable("hyper", &Level::WARN));
        let f = filter(Some("mcp_runtime=[span]"));
        assert!(
            f.would_enable("x", &Level::INFO),
            "a bad value falls back to info"
        );
    }
}

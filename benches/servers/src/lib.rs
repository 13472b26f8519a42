//! What the servers of `mcp-bench-http` and `mcp-bench-stdio` share: the two tools the
//! benches call, and the `main` that runs the server its argument names.

use mcp_runtime::tool;
use std::process::ExitCode;

/// Adds two integers.
#[tool]
pub async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Adds two integers, after yielding once to the runtime: its first poll is pending, so
/// the server runs it as a task of its own (the path of any handler that awaits I/O).
#[tool]
pub async fn add_later(a: i64, b: i64) -> String {
    tokio::task::yield_now().await;
    (a + b).to_string()
}

/// Echoes the text back.
#[tool]
pub async fn echo(text: String) -> String {
    text
}

/// Runs `serve` with the first argument, the kind of server; `bin` names the binary in
/// its error.
pub fn main(bin: &str, serve: fn(&str) -> std::io::Result<()>) -> ExitCode {
    let kind = std::env::args().nth(1).unwrap_or_default();
    match serve(&kind) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{bin}: {e}");
            ExitCode::FAILURE
        }
    }
}

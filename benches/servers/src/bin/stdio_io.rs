//! The stdio bench's "ours-tokio-io" server: the README's server (`#[tool]` `add` and
//! `echo`, multi-thread runtime, no subscriber) over `tokio::io::stdin()` and `stdout()`
//! (the blocking pool) through `serve_io`, which is what `serve_stdio` used before it read
//! stdin itself: the before and after of that change, in one run.
//!
//! A binary of its own, apart from `mcp-bench-stdio`: no user's server holds both ways of
//! serving stdio, so this one's code (`serve_io`, tokio's stdin and stdout) does not sit in
//! the binary whose start-up and idle RSS rows the stdio bench prints.

use mcp_bench_servers::{add, add_later, echo};
use mcp_runtime::{Server, tools};
use std::process::ExitCode;

fn serve(kind: &str) -> std::io::Result<()> {
    if kind != "ours-tokio-io" {
        return Err(std::io::Error::other(format!("unknown server {kind:?}")));
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let server = Server::builder("bench", "1.0")
                .tools(tools![add, add_later, echo])
                .build()
                .map_err(std::io::Error::other)?;
            let stop = std::future::pending::<()>();
            server
                .serve_io(tokio::io::stdin(), tokio::io::stdout(), stop)
                .await
        })
}

fn main() -> ExitCode {
    mcp_bench_servers::main("mcp-bench-stdio-io", serve)
}

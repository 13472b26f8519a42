//! The stdio bench's servers (benches/stdio.rs), one per argument, on stdin/stdout:
//! - `raw`: the floor, a bare line loop (read a line, parse it into a `serde_json::Value`,
//!   answer the sum, write a line, flush);
//! - `ours`: the README's server (`#[tool]` `add` and `echo`, `serve_stdio`) on a
//!   multi-thread runtime, no subscriber; it also has `add_later`, which yields once
//!   before it answers, so it runs as a spawned task;
//! - `ours-current-thread`: the same on a current-thread runtime
//!   (`#[tokio::main(flavor = "current_thread")]`, what `cargo mcp new` generates for stdio);
//! - `ours-logged`: "ours" with logging as it ships (`telemetry::init()`).
//!
//! A binary of its own with mcp-runtime's default features, as a user's server is built:
//! no HTTP code is linked in, and none of the optional features the test suite turns on.
//! "ours" over `tokio::io` (`ours-tokio-io`) is in `mcp-bench-stdio-io`, so that this
//! binary holds only what a user's stdio server does (and the bare loop).

use mcp_bench_servers::{add, add_later, echo};
use mcp_runtime::{Server, tools};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::process::ExitCode;

fn serve(kind: &str) -> std::io::Result<()> {
    match kind {
        "ours" | "ours-current-thread" | "ours-logged" => {
            if kind == "ours-logged" {
                mcp_runtime::telemetry::init();
            }
            let rt = if kind == "ours-current-thread" {
                tokio::runtime::Builder::new_current_thread()
            } else {
                tokio::runtime::Builder::new_multi_thread()
            }
            .enable_all()
            .build()?;
            rt.block_on(async {
                let server = Server::builder("bench", "1.0")
                    .tools(tools![add, add_later, echo])
                    .build()
                    .map_err(std::io::Error::other)?;
                server.serve_stdio().await
            })
        }
        "raw" => {
            let stdin = std::io::stdin();
            let mut out = std::io::stdout().lock();
            for line in stdin.lock().lines() {
                let line = line?;
                let Ok(req) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let result = match req["method"].as_str() {
                    Some("tools/call") => {
                        let a = &req["params"]["arguments"];
                        let sum = a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0);
                        json!({"content": [{"type": "text", "text": sum.to_string()}]})
                    }
                    _ => json!({"tools": []}),
                };
                let reply = json!({"jsonrpc": "2.0", "id": req["id"], "result": result});
                serde_json::to_writer(&mut out, &reply)?;
                out.write_all(b"\n")?;
                out.flush()?;
            }
            Ok(())
        }
        other => Err(std::io::Error::other(format!("unknown server {other:?}"))),
    }
}

fn main() -> ExitCode {
    mcp_bench_servers::main("mcp-bench-stdio", serve)
}

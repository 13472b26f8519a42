//! The rmcp rows of the `stdio` and `http` benches: the server of benches/rmcp-server
//! (rmcp 3.11.0, the official Rust SDK), found through `BENCH_RMCP_BIN`, and the check
//! each server's first `tools/call` answers pass before anything is timed.

use serde_json::Value;
use std::path::PathBuf;

/// How to get the binary, for the `rmcp: skipped (...)` line.
const HOW: &str = "benches/run-all.sh builds benches/rmcp-server and sets it; by hand: \
    cargo build --release --manifest-path benches/rmcp-server/Cargo.toml, then \
    BENCH_RMCP_BIN=<its target dir>/release/rmcp-bench-server";

/// The rmcp server's binary (`BENCH_RMCP_BIN`), or why there is none.
pub fn binary() -> Result<PathBuf, String> {
    if std::env::var_os("BENCH_RMCP").is_some_and(|v| v == "0") {
        return Err("BENCH_RMCP=0".into());
    }
    match std::env::var_os("BENCH_RMCP_BIN") {
        Some(path) if !path.is_empty() => {
            let path = PathBuf::from(path);
            if path.is_file() {
                Ok(path)
            } else {
                Err(format!(
                    "BENCH_RMCP_BIN={} is not a file; {HOW}",
                    path.display()
                ))
            }
        }
        _ => Err(format!("BENCH_RMCP_BIN is not set; {HOW}")),
    }
}

/// `Ok` when `message` (one JSON-RPC message) answers request `id` with a tool result
/// (not a JSON-RPC error, not `isError`) whose only content is the text `text`.
pub fn check_call_result(message: &str, id: u64, text: &str) -> Result<(), String> {
    let wrong = || format!("not the result {text:?} of request {id}: {message}");
    let v: Value = serde_json::from_str(message.trim()).map_err(|_| wrong())?;
    let result = &v["result"];
    let content = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    let ok = v["id"] == id
        && v.get("error").is_none()
        && result["isError"] != true
        && content.len() == 1
        && content[0]["type"] == "text"
        && content[0]["text"] == text;
    if ok { Ok(()) } else { Err(wrong()) }
}

/// The JSON-RPC answer in an HTTP response body: the body itself when it is JSON, else
/// (an event stream) the first `data:` that holds a response or an error.
#[allow(dead_code)] // the stdio bench has no HTTP bodies
pub fn http_message(body: &str) -> &str {
    if body.trim_start().starts_with('{') {
        return body;
    }
    let data = body.lines().filter_map(|l| l.strip_prefix("data:"));
    let mut data = data.map(|d| d.strip_prefix(' ').unwrap_or(d));
    data.find(|d| {
        serde_json::from_str::<Value>(d)
            .is_ok_and(|v| v.get("result").is_some() || v.get("error").is_some())
    })
    .unwrap_or(body)
}

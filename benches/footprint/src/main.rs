//! The stdio bench's bare line loop (`raw`, as in benches/servers/src/bin/stdio.rs) and,
//! for every other server name the bench asks for (`ours`, `ours-current-thread`, ...),
//! the same loop that also runs generated code on every line, chosen by `FOOTPRINT`:
//! - `same` (default): one small function called 700 times (the fewest cache lines);
//! - `lines`: 700 distinct small functions, one call each, in a shuffled order: about a
//!   thousand more cache lines per line of input, on a few more pages;
//! - `pages`: 110 small functions, 700 calls round them, each function on a page of its
//!   own (run.sh links it so): a few hundred more cache lines, on about a hundred more pages.
//!
//! - `atomics`: `same`, then 100 atomic read-modify-writes (`lock xadd`, uncontended), about
//!   what a request of the runtime makes (benches/README.md).
//!
//! The modes run about the same instructions, so what the bench's `ours` costs more in one
//! mode than in `same` is what reaching that much more code (or those atomics) costs.

use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};

#[allow(dead_code)]
mod pads {
    include!(concat!(env!("OUT_DIR"), "/pads.rs"));
}

/// What the `atomics` mode counts on.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// `same`, then 100 uncontended atomic read-modify-writes.
fn atomics(x: u64) -> u64 {
    let x = pads::same(x);
    for _ in 0..100 {
        std::hint::black_box(&COUNTER).fetch_add(1, Ordering::AcqRel);
    }
    x
}

fn main() {
    let kind = std::env::args().nth(1).unwrap_or_default();
    let mode = std::env::var("FOOTPRINT").unwrap_or_default();
    let extra: Option<fn(u64) -> u64> = match (kind.as_str(), mode.as_str()) {
        ("raw", _) => None,
        (_, "lines") => Some(pads::lines),
        (_, "pages") => Some(pads::pages),
        (_, "atomics") => Some(atomics),
        (_, "fill") => {
            // Runs every filler once. Nothing asks for it; it keeps the fillers linked.
            let mut x = 1;
            for f in &pads::FILLERS {
                x = f(x);
            }
            println!("{x}");
            return;
        }
        _ => Some(pads::same),
    };
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut acc = 1u64;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(req) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(f) = extra {
            acc = f(acc);
        }
        let result = match req["method"].as_str() {
            Some("tools/call") => {
                let a = &req["params"]["arguments"];
                let text = match req["params"]["name"].as_str() {
                    Some("echo") => a["text"].as_str().unwrap_or_default().to_owned(),
                    _ => (a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0)).to_string(),
                };
                json!({"content": [{"type": "text", "text": text}]})
            }
            _ => json!({"tools": []}),
        };
        let mut reply = json!({"jsonrpc": "2.0", "id": req["id"], "result": result});
        // Keeps the generated code's result alive (and so its calls).
        if acc == 0 {
            reply["acc"] = json!(acc);
        }
        if serde_json::to_writer(&mut out, &reply).is_err()
            || out.write_all(b"\n").is_err()
            || out.flush().is_err()
        {
            break;
        }
    }
}

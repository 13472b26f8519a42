//! stdio benchmark: `mcp-runtime` ("ours") against the floor, a bare line loop ("raw":
//! read a line, parse it into a `serde_json::Value`, answer the sum, write a line, flush),
//! both child processes of this binary (`--serve ours|raw`) speaking newline-delimited
//! JSON-RPC on their stdin/stdout. Printed, never asserted; non-zero exit only when a
//! server answers wrongly.
//!
//! A fourth child, "ours-current-thread", is "ours" on a current-thread runtime
//! (`#[tokio::main(flavor = "current_thread")]`): no second worker to wake per message.
//!
//! A third child, "ours-tokio-io", is the same server over `tokio::io::stdin()` and
//! `stdout()` (what `serve_stdio` used before it got its own pipe handling), so one run
//! shows that change.
//!
//! Rows:
//! - round trips: one client, closed loop (`tools/call add`, wait for the answer, repeat)
//!   for `BENCH_SECS` (default 3) per server in `BENCH_ROUNDS` (default 3) alternating
//!   rounds; round trips per second and the server's CPU time (user + sys, from
//!   `/proc/<pid>/stat`) per round trip;
//! - cold start: spawn → the answer to the first `tools/list`, median of `BENCH_STARTS`
//!   (default 15) spawns;
//! - idle RSS after the first calls (`VmRSS` of `/proc/<pid>/status`).
//!
//! The client runs in this process; client and server share the machine's cores, so
//! compare ratios.

use mcp_runtime::{Server, tool, tools};
use serde_json::{Value, json};
#[path = "common/child.rs"]
mod child;

use child::StdioChild;
use std::io::{BufRead, Write};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Echoes the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

fn serve(kind: &str) -> std::io::Result<()> {
    match kind {
        "ours" | "ours-tokio-io" | "ours-current-thread" => {
            let rt = if kind == "ours-current-thread" {
                tokio::runtime::Builder::new_current_thread()
            } else {
                tokio::runtime::Builder::new_multi_thread()
            }
            .enable_all()
            .build()?;
            rt.block_on(async {
                let server = Server::builder("bench", "1.0")
                    .tools(tools![add, echo])
                    .build()
                    .map_err(std::io::Error::other)?;
                if kind != "ours-tokio-io" {
                    server.serve_stdio().await
                } else {
                    // The same server over tokio's stdin/stdout (the blocking pool), as
                    // `serve_stdio` did before: the before/after of one change, same run.
                    let stop = std::future::pending::<()>();
                    server
                        .serve_io(tokio::io::stdin(), tokio::io::stdout(), stop)
                        .await
                }
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

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// One of this binary's servers (`--serve kind`) as a child.
fn spawn(kind: &str) -> Result<StdioChild, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(["--serve", kind]);
    StdioChild::spawn(cmd)
}

fn call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},{META}}}}}"#
    ) + "\n"
}

fn list(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{META}}}}}"#) + "\n"
}

#[derive(Default)]
struct Sample {
    trips: u64,
    secs: f64,
    ticks: u64,
}

fn measure(c: &mut StdioChild, secs: f64, next_id: &mut u64) -> Result<Sample, String> {
    // Warm-up.
    for _ in 0..200 {
        *next_id += 1;
        c.round_trip(&call(*next_id))?;
    }
    let t0 = c.cpu_ticks();
    let start = Instant::now();
    let mut trips = 0;
    while start.elapsed().as_secs_f64() < secs {
        *next_id += 1;
        let answer = c.round_trip(&call(*next_id))?;
        if !answer.contains(r#""text":"5""#) {
            return Err(format!("unexpected answer: {answer}"));
        }
        trips += 1;
    }
    Ok(Sample {
        trips,
        secs: start.elapsed().as_secs_f64(),
        ticks: c.cpu_ticks() - t0,
    })
}

fn tick_us() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().ok();
    let tck: f64 = out
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0);
    1e6 / tck
}

fn cold_start(kind: &str) -> Result<(Duration, u64), String> {
    let start = Instant::now();
    let mut c = spawn(kind)?;
    let answer = c.round_trip(&list(1))?.to_owned();
    let took = start.elapsed();
    if !answer.contains("\"tools\"") {
        return Err(format!("{kind}: unexpected tools/list answer: {answer}"));
    }
    for id in 2..50 {
        c.round_trip(&call(id))?;
    }
    std::thread::sleep(Duration::from_millis(100));
    Ok((took, c.rss_kib()))
}

fn env(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn bench() -> Result<(), String> {
    let secs = env("BENCH_SECS", 3.0);
    let rounds = env("BENCH_ROUNDS", 3.0).max(1.0) as u32;
    let starts = env("BENCH_STARTS", 15.0).max(1.0) as usize;
    let tick = tick_us();
    let mut ours = spawn("ours")?;
    let mut raw = spawn("raw")?;
    let mut old = spawn("ours-tokio-io")?;
    let mut one = spawn("ours-current-thread")?;
    let (mut so, mut sr, mut st) = (Sample::default(), Sample::default(), Sample::default());
    let mut s1 = Sample::default();
    let mut id = 0;
    for _ in 0..rounds {
        for (c, s) in [
            (&mut ours, &mut so),
            (&mut raw, &mut sr),
            (&mut old, &mut st),
            (&mut one, &mut s1),
        ] {
            let m = measure(c, secs / f64::from(rounds), &mut id)?;
            s.trips += m.trips;
            s.secs += m.secs;
            s.ticks += m.ticks;
        }
    }
    drop((ours, raw, old, one));
    let rate = |s: &Sample| s.trips as f64 / s.secs;
    let cpu = |s: &Sample| s.ticks as f64 * tick / s.trips.max(1) as f64;
    println!("stdio benchmark: {secs}s per server in {rounds} rounds, one client, closed loop");
    println!(
        "{:<34} {:>12} {:>12} {:>8}",
        "metric", "raw", "ours", "ours/raw"
    );
    println!(
        "{:<34} {:>12.0} {:>12.0} {:>7.2}x",
        "round trips/s",
        rate(&sr),
        rate(&so),
        rate(&so) / rate(&sr)
    );
    println!(
        "{:<34} {:>10.1}us {:>10.1}us {:>7.2}x",
        "server CPU per round trip",
        cpu(&sr),
        cpu(&so),
        cpu(&so) / cpu(&sr)
    );
    println!(
        "{:<34} {:>12.0} {:>12.0} {:>7.2}x   (ours over tokio::io stdin/stdout)",
        "  tokio::io variant: round trips/s",
        rate(&sr),
        rate(&st),
        rate(&st) / rate(&sr)
    );
    println!(
        "{:<34} {:>10.1}us {:>10.1}us {:>7.2}x",
        "  tokio::io variant: CPU/round trip",
        cpu(&sr),
        cpu(&st),
        cpu(&st) / cpu(&sr)
    );
    println!(
        "{:<34} {:>12.0} {:>12.0} {:>7.2}x   (ours on a current-thread runtime)",
        "  current-thread: round trips/s",
        rate(&sr),
        rate(&s1),
        rate(&s1) / rate(&sr)
    );
    println!(
        "{:<34} {:>10.1}us {:>10.1}us {:>7.2}x",
        "  current-thread: CPU/round trip",
        cpu(&sr),
        cpu(&s1),
        cpu(&s1) / cpu(&sr)
    );
    let start_of = |kind: &str| -> Result<(Duration, u64), String> {
        let mut times = Vec::new();
        let mut rss = 0;
        for _ in 0..starts {
            let (t, r) = cold_start(kind)?;
            times.push(t);
            rss = r;
        }
        times.sort();
        Ok((times[times.len() / 2], rss))
    };
    let (tr, rr) = start_of("raw")?;
    let (to, ro) = start_of("ours")?;
    println!(
        "{:<34} {:>10.2}ms {:>10.2}ms {:>7.2}x",
        "cold start (spawn -> tools/list)",
        tr.as_secs_f64() * 1e3,
        to.as_secs_f64() * 1e3,
        to.as_secs_f64() / tr.as_secs_f64()
    );
    println!(
        "{:<34} {:>9.1}MiB {:>9.1}MiB {:>7.2}x",
        "idle RSS after 50 calls",
        rr as f64 / 1024.0,
        ro as f64 / 1024.0,
        ro as f64 / rr.max(1) as f64
    );
    let (t1, r1) = start_of("ours-current-thread")?;
    println!(
        "{:<34} {:>10.2}ms {:>10.2}ms {:>7.2}x",
        "  current-thread: cold start",
        tr.as_secs_f64() * 1e3,
        t1.as_secs_f64() * 1e3,
        t1.as_secs_f64() / tr.as_secs_f64()
    );
    println!(
        "{:<34} {:>9.1}MiB {:>9.1}MiB {:>7.2}x",
        "  current-thread: idle RSS",
        rr as f64 / 1024.0,
        r1 as f64 / 1024.0,
        r1 as f64 / rr.max(1) as f64
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.iter().position(|a| a == "--serve") {
        Some(i) => serve(args.get(i + 1).map_or("", String::as_str)).map_err(|e| e.to_string()),
        None => bench(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stdio bench: {e}");
            ExitCode::FAILURE
        }
    }
}

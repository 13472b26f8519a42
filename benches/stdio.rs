//! stdio benchmark: `mcp-runtime` ("ours") against the floor, a bare line loop ("raw":
//! read a line, parse it into a `serde_json::Value`, answer the sum, write a line, flush),
//! both child processes (`mcp-bench-stdio ours|raw`, a binary of benches/servers built
//! with mcp-runtime's default features, as a user's server is) speaking newline-delimited
//! JSON-RPC on their stdin/stdout. Printed, never asserted; non-zero exit only when a
//! server answers wrongly.
//!
//! A fourth child, "ours-current-thread", is "ours" on a current-thread runtime
//! (`#[tokio::main(flavor = "current_thread")]`, what `cargo mcp new` generates for stdio).
//!
//! A fifth child, "ours-logged", is "ours" with logging as it ships: `telemetry::init()`
//! at its default filter (`info`, no `RUST_LOG`), as the README's server does, so each
//! request's span is live; its row gives the span's cost beside ours without a subscriber.
//!
//! A sixth, "ours-spawned", is "ours" called with `add_later`, a tool that yields once
//! before it answers: its first poll is pending, so each call runs as a spawned task and
//! its answer comes back from a worker (the path of every handler that awaits I/O).
//!
//! A third child, "ours-tokio-io", is the same server over `tokio::io::stdin()` and
//! `stdout()` (what `serve_stdio` used before it read stdin itself), so one run
//! shows that change. It is a binary of its own (`mcp-bench-stdio-io`), so its code is
//! not in the binary of the start-up and idle RSS rows, as it is in no user's server.
//!
//! Rows:
//! - round trips: one client, closed loop (`tools/call add`, wait for the answer, repeat)
//!   for `BENCH_SECS` (default 3) per server in `BENCH_ROUNDS` (default 3) alternating
//!   rounds; round trips per second and the server's CPU time (user + sys, from
//!   `/proc/<pid>/stat`) per round trip;
//! - instructions per round trip, counted by valgrind's callgrind (common/callgrind.rs:
//!   two runs of 100 and 1100 calls, start-up and exit cancelled out), for raw, ours, ours
//!   on a current-thread runtime, ours with logging on and rmcp: a figure the machine's
//!   load does not move; skipped when `valgrind` is not on `PATH` or `BENCH_CALLGRIND=0`;
//! - code footprint per round trip, from the same runs: the distinct instructions that ran
//!   on every round trip, and the 64-byte cache lines and 4 KiB pages of code they lie on;
//! - simulated stalls per round trip, from the same runs: L1 instruction and data cache
//!   misses and mispredicted branches (callgrind's cache and branch simulation);
//! - cold start: spawn → the answer to the first `tools/list`, median of `BENCH_STARTS`
//!   (default 15) spawns;
//! - idle RSS after the first calls (`VmRSS` of `/proc/<pid>/status`, median of the same
//!   spawns), and its anonymous
//!   part (`RssAnon`: heap, stacks, written pages; the rest is pages of the binary and its
//!   libraries, shared through the page cache).
//!
//! rmcp (the official Rust SDK, 3.11.0) in the same run, when `BENCH_RMCP_BIN` names the
//! binary of benches/rmcp-server (benches/run-all.sh builds it and sets it; otherwise one
//! `rmcp: skipped (...)` line says why and how): "rmcp" serves the same two tools over
//! `rmcp::transport::stdio()` (tokio's stdin/stdout, what rmcp's README uses), and a
//! variant, "rmcp-pipes", over `rmcp::transport::stdio_pipes()`. Both get the very
//! requests ours gets: 2026-07-28, no `initialize`, the protocol version and client
//! capabilities in each request's `_meta` (rmcp takes the first such request as the start
//! of a session-less lifecycle). The rmcp column sits beside raw and ours; a row naming a
//! variant puts it in the column it replaces. Ratios are ours (or our variant) over raw
//! and over rmcp.
//!
//! Before timing, each server's answers to `tools/call add(2, 3)` (and, but for raw, to
//! `echo("hi")`) must be tool results with the right text and id: a server answering
//! errors fails the bench instead of being timed.
//!
//! The client runs in this process; client and server share the machine's cores, so
//! compare ratios.

#[path = "common/callgrind.rs"]
mod callgrind;
#[path = "common/child.rs"]
mod child;
#[path = "common/rmcp.rs"]
mod rmcp;
#[path = "common/servers.rs"]
mod servers;

use child::StdioChild;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The command of a server: one of benches/servers (`mcp-bench-stdio kind`;
/// `mcp-bench-stdio-io` for "ours-tokio-io"), or "rmcp" / "rmcp-pipes", the binary of
/// `BENCH_RMCP_BIN`.
fn command(kind: &str) -> Result<Command, String> {
    let mut cmd = match kind {
        "rmcp" | "rmcp-pipes" => Command::new(rmcp::binary()?),
        "ours-tokio-io" => Command::new(servers::binary("mcp-bench-stdio-io")?),
        _ => Command::new(servers::binary("mcp-bench-stdio")?),
    };
    match kind {
        "rmcp" => {}
        "rmcp-pipes" => drop(cmd.args(["--serve", "stdio-pipes"])),
        // Logging as it ships: no `RUST_LOG`, so `info`.
        "ours-logged" => drop(cmd.arg(kind).env("RUST_LOG", "")),
        "ours-spawned" => drop(cmd.arg("ours")),
        _ => drop(cmd.arg(kind)),
    }
    Ok(cmd)
}

/// A server (see [`command`]) as a child.
fn spawn(kind: &str) -> Result<StdioChild, String> {
    StdioChild::spawn(command(kind)?)
}

fn call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},{META}}}}}"#
    ) + "\n"
}

/// `add(2, 3)` through `add_later`, which yields once (so it runs as a task).
fn later_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add_later","arguments":{{"a":2,"b":3}},{META}}}}}"#
    ) + "\n"
}

/// The call `kind` is timed with.
fn request(kind: &str) -> fn(u64) -> String {
    match kind {
        "ours-spawned" => later_call,
        _ => call,
    }
}

fn echo_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},{META}}}}}"#
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

/// Fails unless `kind` answers `add(2, 3)` with the tool result "5" (and, but for raw,
/// which answers every call with the sum, `echo("hi")` with "hi").
fn verify(kind: &str, c: &mut StdioChild, next_id: &mut u64) -> Result<(), String> {
    let mut calls = vec![(request(kind), "5")];
    if kind != "raw" {
        calls.push((echo_call, "hi"));
    }
    for (request, text) in calls {
        *next_id += 1;
        let answer = c.round_trip(&request(*next_id))?;
        rmcp::check_call_result(answer, *next_id, text).map_err(|e| format!("{kind}: {e}"))?;
    }
    Ok(())
}

fn measure(
    c: &mut StdioChild,
    call: fn(u64) -> String,
    secs: f64,
    next_id: &mut u64,
) -> Result<Sample, String> {
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

/// Instructions per round trip of `kind` (a `tools/call`), counted by callgrind.
fn instructions(kind: &str) -> Result<callgrind::Cost, String> {
    callgrind::per_request(kind, |out, n| {
        let mut c = StdioChild::spawn(callgrind::wrap(&command(kind)?, out))?;
        for id in 1..=n {
            let answer = c.round_trip(&call(id))?;
            if !answer.contains(r#""text":"5""#) {
                return Err(format!(
                    "{kind} under callgrind: unexpected answer: {answer}"
                ));
            }
        }
        callgrind::wait_exit(c.close())
    })
}

/// Spawn → the `tools/list` answer, then 50 calls: the time to the answer, and the idle
/// resident set and its anonymous part (KiB) after the calls.
fn cold_start(kind: &str) -> Result<(Duration, u64, u64), String> {
    let cmd = command(kind)?;
    let start = Instant::now();
    let mut c = StdioChild::spawn(cmd)?;
    let answer = c.round_trip(&list(1))?.to_owned();
    let took = start.elapsed();
    if !answer.contains("\"tools\"") {
        return Err(format!("{kind}: unexpected tools/list answer: {answer}"));
    }
    for id in 2..50 {
        c.round_trip(&call(id))?;
    }
    std::thread::sleep(Duration::from_millis(100));
    Ok((took, c.rss_kib(), c.anon_kib()))
}

fn env(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One row of the table: raw, ours (or our variant), rmcp (or its variant) when measured.
fn row(label: &str, unit: &str, (raw, ours, rmcp): (f64, f64, Option<f64>), note: &str) {
    let cell = |v: f64| match unit {
        "" => format!("{v:.0}"),
        "us" => format!("{v:.1}us"),
        "ms" => format!("{v:.2}ms"),
        "MiB" => format!("{v:.2}MiB"),
        _ => format!("{v:.1}{unit}"),
    };
    // A ratio to a count below one (the bare loop's data misses: its data stays in L1)
    // says nothing; the counts themselves are printed.
    let ratio = |base: f64| match base >= 1.0 || !unit.is_empty() {
        true => format!("{:.2}x", ours / base),
        false => "-".into(),
    };
    let (rmcp, vs_rmcp) = match rmcp {
        Some(r) => (cell(r), ratio(r)),
        None => ("-".into(), "-".into()),
    };
    let vs_raw = ratio(raw);
    let (raw, ours) = (cell(raw), cell(ours));
    println!("{label:<36} {raw:>11} {ours:>11} {rmcp:>11} {vs_raw:>9} {vs_rmcp:>10}{note}");
}

fn bench() -> Result<(), String> {
    let secs = env("BENCH_SECS", 3.0);
    let rounds = env("BENCH_ROUNDS", 3.0).max(1.0) as u32;
    let starts = env("BENCH_STARTS", 15.0).max(1.0) as usize;
    let tick = child::tick_us();
    let with_rmcp = match rmcp::binary() {
        Ok(_) => true,
        Err(why) => {
            println!("rmcp: skipped ({why})");
            false
        }
    };
    let mut kinds = vec![
        "ours",
        "raw",
        "ours-spawned",
        "ours-tokio-io",
        "ours-current-thread",
        "ours-logged",
    ];
    if with_rmcp {
        kinds.extend(["rmcp", "rmcp-pipes"]);
    }
    let mut id = 0;
    let mut servers = Vec::new();
    for kind in kinds {
        let mut child = spawn(kind)?;
        verify(kind, &mut child, &mut id)?;
        servers.push((kind, child, Sample::default()));
    }
    // Each round starts one server further on, so no server is always measured first
    // or always after the same one.
    let n = servers.len();
    for round in 0..rounds as usize {
        for i in 0..n {
            let (kind, c, s) = &mut servers[(round + i) % n];
            let m = measure(c, request(kind), secs / f64::from(rounds), &mut id)?;
            s.trips += m.trips;
            s.secs += m.secs;
            s.ticks += m.ticks;
        }
    }
    let samples: Vec<(&str, Sample)> = servers.into_iter().map(|(k, _, s)| (k, s)).collect();
    let sample = |kind: &str| samples.iter().find(|(k, _)| *k == kind).map(|(_, s)| s);
    let rate = |s: &Sample| s.trips as f64 / s.secs;
    let cpu = |s: &Sample| s.ticks as f64 * tick / s.trips.max(1) as f64;
    let [so, sr, st, s1, sl, ss] = [
        "ours",
        "raw",
        "ours-tokio-io",
        "ours-current-thread",
        "ours-logged",
        "ours-spawned",
    ]
    .map(|k| sample(k).expect("measured"));
    let (sm, sp) = (sample("rmcp"), sample("rmcp-pipes"));
    println!("stdio benchmark: {secs}s per server in {rounds} rounds, one client, closed loop");
    println!(
        "{:<36} {:>11} {:>11} {:>11} {:>9} {:>10}",
        "metric", "raw", "ours", "rmcp", "ours/raw", "ours/rmcp"
    );
    let trips = |ours: &Sample, rmcp: Option<&Sample>| (rate(sr), rate(ours), rmcp.map(rate));
    let cpus = |ours: &Sample, rmcp: Option<&Sample>| (cpu(sr), cpu(ours), rmcp.map(cpu));
    row("round trips/s", "", trips(so, sm), "");
    row("server CPU per round trip", "us", cpus(so, sm), "");
    let note = "   (ours, add_later: yields once, so runs as a task)";
    row("  spawned tool: round trips/s", "", trips(ss, sm), note);
    row("  spawned tool: CPU/round trip", "us", cpus(ss, sm), "");
    let note = "   (ours over tokio::io stdin/stdout)";
    row(
        "  tokio::io variant: round trips/s",
        "",
        trips(st, sm),
        note,
    );
    row(
        "  tokio::io variant: CPU/round trip",
        "us",
        cpus(st, sm),
        "",
    );
    let note = "   (ours on a current-thread runtime)";
    row("  current-thread: round trips/s", "", trips(s1, sm), note);
    row("  current-thread: CPU/round trip", "us", cpus(s1, sm), "");
    let note = format!(
        "   (telemetry::init, info; span cost {:+.1}us/round trip)",
        cpu(sl) - cpu(so)
    );
    row("  logging on: round trips/s", "", trips(sl, sm), &note);
    row("  logging on: CPU/round trip", "us", cpus(sl, sm), "");
    if with_rmcp {
        let note = "   (rmcp over rmcp::transport::stdio_pipes())";
        row("  rmcp stdio_pipes: round trips/s", "", trips(so, sp), note);
        row("  rmcp stdio_pipes: CPU/round trip", "us", cpus(so, sp), "");
    }
    match callgrind::available() {
        Err(why) => println!("instructions per round trip: skipped ({why})"),
        Ok(()) => {
            let (cr, co) = (instructions("raw")?, instructions("ours")?);
            let cm = if with_rmcp {
                Some(instructions("rmcp")?)
            } else {
                None
            };
            let c1 = instructions("ours-current-thread")?;
            let cl = instructions("ours-logged")?;
            let k = |c: &callgrind::Cost| c.instructions / 1e3;
            let code = |c: &callgrind::Cost| c.code as f64;
            let lines = |c: &callgrind::Cost| c.lines as f64;
            let pages = |c: &callgrind::Cost| c.pages as f64;
            let note = "   (callgrind: the same whatever the load)";
            row(
                "instructions per round trip",
                "k",
                (k(&cr), k(&co), cm.as_ref().map(k)),
                note,
            );
            let im = cm.as_ref().map(k);
            row(
                "  current-thread: instructions",
                "k",
                (k(&cr), k(&c1), im),
                "",
            );
            let note = format!("   (span cost {:+.1}k/round trip)", k(&cl) - k(&co));
            row(
                "  logging on: instructions",
                "k",
                (k(&cr), k(&cl), im),
                &note,
            );
            type Sim = fn(&callgrind::Cost) -> f64;
            let sims: [(&str, Sim, &str); 3] = [
                (
                    "L1 instruction misses/round trip",
                    |c| c.i1_misses,
                    "   (simulated: 32 KiB L1i, 64-byte lines)",
                ),
                (
                    "L1 data misses/round trip",
                    |c| c.d1_misses,
                    "   (simulated: 32 KiB L1d; reads and writes)",
                ),
                (
                    "mispredicted branches/round trip",
                    |c| c.mispredicts,
                    "   (simulated: conditional and indirect)",
                ),
            ];
            for (label, sim, note) in sims {
                row(label, "", (sim(&cr), sim(&co), cm.as_ref().map(sim)), note);
            }
            let note = "   (distinct instructions run on every round trip)";
            let cmc = cm.as_ref().map(code);
            row(
                "code footprint per round trip",
                "",
                (code(&cr), code(&co), cmc),
                note,
            );
            let note = "   (64-byte cache lines those lie on)";
            row(
                "  its cache lines",
                "",
                (lines(&cr), lines(&co), cm.as_ref().map(lines)),
                note,
            );
            let note = "   (4 KiB pages those lie on)";
            let cmp = cm.as_ref().map(pages);
            row(
                "  its pages of code",
                "",
                (pages(&cr), pages(&co), cmp),
                note,
            );
            row(
                "  current-thread: footprint",
                "",
                (code(&cr), code(&c1), cmc),
                "",
            );
            row(
                "  current-thread: pages",
                "",
                (pages(&cr), pages(&c1), cmp),
                "",
            );
        }
    }
    // Medians over the starts: start time, resident set and its anonymous part (MiB).
    // The resident set moves between starts by whole 64 KiB windows of code (the kernel
    // maps the pages around each one a process touches, and address space randomization
    // shifts where those windows fall in each library), so one start's figure is noisy.
    let start_of = |kind: &str| -> Result<(f64, f64, f64), String> {
        let (mut times, mut rss, mut anon) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..starts {
            let (t, r, a) = cold_start(kind)?;
            times.push(t);
            rss.push(r);
            anon.push(a);
        }
        times.sort();
        rss.sort();
        anon.sort();
        let mid = starts / 2;
        Ok((
            times[mid].as_secs_f64() * 1e3,
            rss[mid] as f64 / 1024.0,
            anon[mid] as f64 / 1024.0,
        ))
    };
    let (tr, rr, ar) = start_of("raw")?;
    let (to, ro, ao) = start_of("ours")?;
    let (tm, rm, am) = match with_rmcp {
        true => start_of("rmcp").map(|(t, r, a)| (Some(t), Some(r), Some(a)))?,
        false => (None, None, None),
    };
    row("cold start (spawn -> tools/list)", "ms", (tr, to, tm), "");
    row("idle RSS after 50 calls", "MiB", (rr, ro, rm), "");
    let note = "   (RssAnon: heap, stacks, written pages; the rest is file pages)";
    row("  of it anonymous", "MiB", (ar, ao, am), note);
    let (t1, r1, a1) = start_of("ours-current-thread")?;
    row("  current-thread: cold start", "ms", (tr, t1, tm), "");
    row("  current-thread: idle RSS", "MiB", (rr, r1, rm), "");
    row("  current-thread: anonymous", "MiB", (ar, a1, am), "");
    Ok(())
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; nothing else to parse.
    match bench() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stdio bench: {e}");
            ExitCode::FAILURE
        }
    }
}

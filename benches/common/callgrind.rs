//! Instructions a server child executes per request, counted by valgrind's callgrind:
//! a figure that does not move with the machine's load, beside the CPU times that do
//! (a shared 2-vCPU VM moves those by 10–30 % between runs; hardware counters are not
//! offered there).
//!
//! The server runs under `valgrind --tool=callgrind` twice, answering `FEW` and then
//! `MANY` requests before it ends on its own (stdin closed), and the difference of the
//! two totals over `MANY - FEW` is the cost of one request, start-up and exit cancelled
//! out. Under valgrind the server's threads take turns, so the count is of work, not of
//! waiting. Skipped, with the reason printed, when `valgrind` is not on `PATH` or
//! `BENCH_CALLGRIND=0`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Requests in the short run, which carries start-up and exit alone.
pub const FEW: u64 = 100;
/// Requests in the long run.
pub const MANY: u64 = 1100;

/// `Err(why)` when the count cannot be made here.
pub fn available() -> Result<(), String> {
    if std::env::var("BENCH_CALLGRIND").is_ok_and(|v| v == "0") {
        return Err("BENCH_CALLGRIND=0".into());
    }
    match Command::new("valgrind").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("valgrind is not on PATH (Debian: apt-get install valgrind)".into()),
    }
}

/// `cmd` run under callgrind, its counts written to `out`: the same program, arguments
/// and environment.
pub fn wrap(cmd: &Command, out: &Path) -> Command {
    let mut v = Command::new("valgrind");
    v.args(["-q", "--tool=callgrind"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => drop(v.env(key, value)),
            None => drop(v.env_remove(key)),
        }
    }
    v
}

/// Instructions per request: `run(out, n)` starts the server under [`wrap`] writing to
/// `out`, makes `n` requests and waits for the server to exit.
pub fn per_request(
    name: &str,
    mut run: impl FnMut(&Path, u64) -> Result<(), String>,
) -> Result<f64, String> {
    let mut totals = [0u64; 2];
    for (total, n) in totals.iter_mut().zip([FEW, MANY]) {
        let out = scratch(name, n);
        let _ = std::fs::remove_file(&out);
        run(&out, n)?;
        *total = read_total(&out)?;
        let _ = std::fs::remove_file(&out);
    }
    let [few, many] = totals;
    if many <= few {
        return Err(format!(
            "{name}: {MANY} requests counted no more than {FEW}"
        ));
    }
    Ok((many - few) as f64 / (MANY - FEW) as f64)
}

/// Waits (up to a minute) for `child`, whose input has ended, to exit on its own: callgrind
/// writes its counts then (a killed server leaves none).
pub fn wait_exit(child: &mut Child) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("the server ended with {status}")),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => return Err("the server did not exit within 60 s of its input's end".into()),
            Err(e) => return Err(format!("wait: {e}")),
        }
    }
}

/// Where the count of `name`'s run of `n` requests goes.
fn scratch(name: &str, n: u64) -> PathBuf {
    std::env::temp_dir().join(format!(
        "mcp-bench-{}-{name}-{n}.callgrind",
        std::process::id()
    ))
}

/// The instructions counted in a callgrind output file (its `summary:` or `totals:`
/// line; every thread of the process together).
fn read_total(out: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix("summary:").or(l.strip_prefix("totals:"))?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .ok_or_else(|| format!("{}: no instruction total in it", out.display()))
}

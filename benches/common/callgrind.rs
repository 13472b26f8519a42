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
//!
//! The same two runs give the code a request runs (its footprint): callgrind counts each
//! instruction address (`--dump-instr=yes`), and an instruction whose count grew by at
//! least `MANY - FEW` between the runs ran on every request. Those instructions, the
//! 64-byte cache lines and the 4 KiB pages of code they lie on, are what each request
//! brings into the instruction cache and TLB: where two servers run as many instructions
//! per request, the one with the wider footprint stalls more (and, page by page, keeps
//! more of its binary resident).
//!
//! The runs also simulate the caches and branch predictors (`--cache-sim=yes
//! --branch-sim=yes`: 32 KiB 8-way L1 instruction and data caches of 64-byte lines and an
//! 8 MiB 16-way last level, set explicitly whatever the host's, and callgrind's simple
//! predictors), so the stalls themselves are counted: L1 instruction misses, L1 data
//! misses (reads and writes) and mispredicted branches (conditional and indirect) per
//! request. On this kind of machine, whose hardware counters are not
//! offered, they are the repeatable account of why equal instructions take unequal time.

use std::collections::{HashMap, HashSet};
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
    v.args(["-q", "--tool=callgrind", "--dump-instr=yes"])
        .args(["--cache-sim=yes", "--branch-sim=yes"])
        // The geometry named above, on every machine: left to itself callgrind takes the
        // host's (64 KiB 4-way L1i on the AMD EPYC machines), and the stall rows of two
        // machines would not compare.
        .args(["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"])
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

/// What one request costs: instructions executed, the simulated stalls, and its code
/// footprint.
#[derive(Clone, Copy)]
pub struct Cost {
    /// Instructions executed per request (every object: the binary and its libraries).
    pub instructions: f64,
    /// L1 instruction cache misses per request (simulated).
    pub i1_misses: f64,
    /// L1 data cache misses per request, reads and writes (simulated).
    pub d1_misses: f64,
    /// Mispredicted branches per request, conditional and indirect (simulated).
    pub mispredicts: f64,
    /// Distinct instructions that ran on every request.
    pub code: usize,
    /// The 64-byte cache lines of code those lie on (what the L1 instruction cache holds).
    pub lines: usize,
    /// The 4 KiB pages of code those lie on.
    pub pages: usize,
}

/// The cost of one request: `run(out, n)` starts the server under [`wrap`] writing to
/// `out`, makes `n` requests and waits for the server to exit.
pub fn per_request(
    name: &str,
    mut run: impl FnMut(&Path, u64) -> Result<(), String>,
) -> Result<Cost, String> {
    let mut profiles = Vec::with_capacity(2);
    for n in [FEW, MANY] {
        let out = scratch(name, n);
        let _ = std::fs::remove_file(&out);
        run(&out, n)?;
        let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()));
        keep(&out, name, n);
        let _ = std::fs::remove_file(&out);
        profiles.push(Profile::parse(&text?).map_err(|e| format!("{}: {e}", out.display()))?);
    }
    let (few, many) = (&profiles[0], &profiles[1]);
    let per = |events: &[&str]| {
        let sum = |p: &Profile| events.iter().map(|e| p.total(e)).sum::<u64>();
        sum(many).saturating_sub(sum(few)) as f64 / (MANY - FEW) as f64
    };
    if many.total("Ir") <= few.total("Ir") {
        return Err(format!(
            "{name}: {MANY} requests counted no more than {FEW}"
        ));
    }
    let every = many
        .counts
        .iter()
        .filter(|(at, n)| **n >= few.counts.get(*at).copied().unwrap_or(0) + (MANY - FEW))
        .map(|(at, _)| *at)
        .collect::<Vec<_>>();
    let lines = every
        .iter()
        .map(|&(object, address)| (object, address >> 6))
        .collect::<HashSet<_>>();
    let pages = every
        .iter()
        .map(|&(object, address)| (object, address >> 12))
        .collect::<HashSet<_>>();
    Ok(Cost {
        instructions: per(&["Ir"]),
        i1_misses: per(&["I1mr"]),
        d1_misses: per(&["D1mr", "D1mw"]),
        mispredicts: per(&["Bcm", "Bim"]),
        code: every.len(),
        lines: lines.len(),
        pages: pages.len(),
    })
}

/// A callgrind output file of one run (`--dump-instr=yes`): the totals of its events
/// (`Ir`, and the simulated misses), and how often each instruction ran, by object
/// (binary or library, named by path) and address.
struct Profile {
    totals: HashMap<String, u64>,
    counts: HashMap<(u32, u64), u64>,
}

impl Profile {
    /// The run's total of `event` (0 when it was not recorded).
    fn total(&self, event: &str) -> u64 {
        self.totals.get(event).copied().unwrap_or(0)
    }

    /// Reads the format's cost lines (`<address> <line> <Ir>`, positions absolute or
    /// relative to the previous line's, `*` for the same); a `calls=` line's next line is
    /// the call's inclusive cost, whose address counts as a position but whose cost is the
    /// callee's. Objects are interned by path, so two runs compare whatever ids each
    /// file gave them.
    fn parse(text: &str) -> Result<Self, String> {
        let mut objects: HashMap<String, u32> = HashMap::new();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut counts = HashMap::new();
        let (mut events, mut totals) = (Vec::new(), None);
        let (mut object, mut address, mut call) = (None, 0u64, false);
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("events:") {
                events = rest.split_whitespace().map(str::to_owned).collect();
                continue;
            }
            if let Some(rest) = line
                .strip_prefix("summary:")
                .or(line.strip_prefix("totals:"))
            {
                // Events left out at the end of a line are 0.
                let values = rest.split_whitespace().map(|t| t.parse::<u64>().ok());
                let named = events.iter().cloned().zip(values);
                totals = named.map(|(e, v)| v.map(|v| (e, v))).collect::<Option<_>>();
                continue;
            }
            // `ob=` names the object of the lines below, `cob=` a callee's; either may
            // define an id (`(id) path`) or use one (`(id)`).
            let (current, rest) = match (line.strip_prefix("ob="), line.strip_prefix("cob=")) {
                (Some(rest), _) => (true, rest),
                (None, Some(rest)) => (false, rest),
                (None, None) => (false, ""),
            };
            if !rest.is_empty() {
                let (id, path) = rest.split_once(')').unwrap_or((rest, ""));
                let path = path.trim();
                if !path.is_empty() {
                    let n = objects.len() as u32;
                    let interned = *objects.entry(path.to_owned()).or_insert(n);
                    ids.insert(id.to_owned(), interned);
                }
                if current {
                    object = ids.get(id).copied();
                }
                continue;
            }
            if line.starts_with("calls=") {
                call = true;
                continue;
            }
            let mut fields = line.split_whitespace();
            let Some(position) = fields.next() else {
                continue;
            };
            address = match position.as_bytes()[0] {
                b'+' | b'-' => match position.parse::<i64>() {
                    Ok(delta) => address.wrapping_add_signed(delta),
                    Err(_) => continue,
                },
                b'*' => address,
                b'0'..=b'9' => match position.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).map_err(|e| e.to_string())?,
                    None => position.parse().map_err(|e| format!("{position}: {e}"))?,
                },
                // Headers and names (`fn=`, `fl=`, `events:`, ...).
                _ => continue,
            };
            let cost = fields
                .nth(1)
                .and_then(|c| c.parse::<u64>().ok())
                .unwrap_or(0);
            if std::mem::take(&mut call) {
                continue;
            }
            if let Some(object) = object {
                *counts.entry((object, address)).or_insert(0) += cost;
            }
        }
        let totals: HashMap<String, u64> = totals.ok_or("no totals in it")?;
        if !totals.contains_key("Ir") {
            return Err("no instruction total in it".into());
        }
        Ok(Profile { totals, counts })
    }
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

/// With `BENCH_CALLGRIND_KEEP=<dir>`, a copy of the run's output goes to
/// `<dir>/<name>-<n>.callgrind` (`<name>.2-<n>.callgrind` for the second count of the
/// same server, and so on), for `callgrind_annotate` or a function-by-function comparison
/// of two servers' footprints.
fn keep(out: &Path, name: &str, n: u64) {
    if let Some(dir) = std::env::var_os("BENCH_CALLGRIND_KEEP") {
        let file = |k: u32| match k {
            1 => format!("{name}-{n}.callgrind"),
            k => format!("{name}.{k}-{n}.callgrind"),
        };
        let k = (1..).find(|&k| !Path::new(&dir).join(file(k)).exists());
        let to = Path::new(&dir).join(file(k.unwrap_or(1)));
        let kept = std::fs::create_dir_all(&dir).and_then(|()| std::fs::copy(out, &to));
        if let Err(e) = kept {
            eprintln!("BENCH_CALLGRIND_KEEP: {}: {e}", to.display());
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

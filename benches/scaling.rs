//! How cost grows with the number of tools: a driver that generates one server crate per
//! size N (N `#[tool] async fn`s, each with a doc comment and three typed arguments,
//! registered with `tools![...]` and served on stdio, the README's way), depending on
//! `mcp-runtime` by path, and measures it. Printed, never asserted; non-zero exit only
//! when a generated server answers wrongly (or a build fails).
//!
//! Rows, per N:
//! - release build of the crate: `cargo build --release` with the dependencies prebuilt
//!   (a one-tool crate of the same shape builds them first), so only the crate is timed;
//!   its wall time and its CPU time (user + sys of cargo and rustc, from this process's
//!   `cutime` + `cstime` in `/proc/self/stat`). rustc gives one module's code one codegen
//!   unit, so with all N tools in the crate's root module LLVM works on one unit on one
//!   core while the others idle: the CPU time shows whether the work itself grows linearly;
//! - the same release build with the tools spread over modules of 100 (`mod part_0 { use
//!   super::*; ... }`, each re-exported): what splitting a large server into modules does
//!   to the wall time; and that crate's rebuild after editing the middle tool (as below);
//! - cold debug build of the crate (dependencies prebuilt likewise);
//! - rebuild after editing the middle tool (one line of its body; debug, incremental);
//! - cold start: spawn the release binary → the answer to the first `tools/list`, median
//!   of `BENCH_STARTS` (default 9) spawns;
//! - idle RSS: `VmRSS` after the whole list was paged through and 50 calls answered;
//! - `Server::build()` per tool, in the release binary (`--time-build`: median of 21
//!   builds, divided by N): start-up cost without the process around it;
//! - `tools/call` round trip on stdio (µs, one client, closed loop for `BENCH_SECS`,
//!   default 1, after 200 calls of warm-up, each call to another tool): flat if it does
//!   not grow with N.
//!
//! `BENCH_SCALING_N` picks the sizes (default `10,100,1000`; `10,100` for a quick run).
//! The crates and their own target directory are under `<target>/scaling/` (the target
//! directory is `CARGO_TARGET_DIR`, else the workspace's `target/`).
//! `BENCH_SCALING_RUNTIME` names another `mcp-runtime` crate directory to build against
//! (an older checkout, for a before/after in one sitting); its crates go to
//! `<target>/scaling/alt/` (the target directory stays shared).

#[path = "common/child.rs"]
mod child;

use child::StdioChild;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The page size `tools/list` uses by default.
const PAGE: usize = 100;

/// Tools per module in the crates laid out in modules.
const MODULE: usize = 100;

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `mcp-runtime` the generated crates depend on, and whether it is another one.
fn runtime() -> (PathBuf, bool) {
    match std::env::var_os("BENCH_SCALING_RUNTIME") {
        Some(p) => (PathBuf::from(p), true),
        None => (workspace().join("mcp-runtime"), false),
    }
}

/// `<target>/scaling`: the generated crates' own target directory (shared by both
/// runtimes, so the dependencies they share are built once) and the crates.
fn scaling_root() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                workspace().join(p)
            }
        })
        .unwrap_or_else(|| workspace().join("target"))
        .join("scaling")
}

/// Where the generated crates are.
fn target_root() -> PathBuf {
    let root = scaling_root();
    if runtime().1 { root.join("alt") } else { root }
}

fn crates_target() -> PathBuf {
    scaling_root().join("target")
}

/// The body line of tool `i` (the one the edit changes).
fn body(i: usize, edit: u32) -> String {
    format!(
        "    format!(\"{i}:{{text}}:{{count}}:{{flag}}\"){}",
        ".repeat(1)".repeat(edit as usize)
    )
}

/// How a generated crate places its tools.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// All in the crate's root module (the README's way for a small server).
    Flat,
    /// In modules of this many tools, each glob-imported by the root.
    Modules(usize),
}

/// The source of a crate with `n` tools laid out as `layout` says; `edited` is the tool
/// whose body was edited how many times.
fn source(n: usize, layout: Layout, edited: Option<(usize, u32)>) -> String {
    let mut s = String::from("use mcp_runtime::{Server, tool, tools};\n\n");
    let (per, vis) = match layout {
        Layout::Flat => (n.max(1), ""),
        Layout::Modules(per) => (per.max(1), "pub "),
    };
    for i in 0..n {
        if layout != Layout::Flat && i % per == 0 {
            let part = i / per;
            s += &format!("use part_{part}::*;\nmod part_{part} {{\nuse super::*;\n\n");
        }
        let edit = edited.filter(|e| e.0 == i).map_or(0, |e| e.1);
        s += &format!(
            "/// Tool number {i}: joins a text, a count and a flag.\n\
             #[tool]\n\
             {vis}async fn tool_{i}(\n    \
                 #[arg(description = \"Some text\")] text: String,\n    \
                 count: u32,\n    \
                 flag: bool,\n\
             ) -> String {{\n\
             {}\n\
             }}\n\n",
            body(i, edit)
        );
        if layout != Layout::Flat && (i % per == per - 1 || i == n - 1) {
            s += "}\n\n";
        }
    }
    s += "fn server() -> Result<Server, mcp_runtime::BuildError> {\n";
    s += "    Server::builder(\"scaling\", \"1.0.0\")\n        .tools(tools![";
    for i in 0..n {
        if i > 0 {
            s += ", ";
        }
        s += &format!("tool_{i}");
    }
    s += "])\n        .build()\n}\n\n";
    // `--time-build`: the median time of `server()` over 21 builds, in ns (the bench's
    // in-process start-up figure); otherwise the server on stdio.
    s += r#"#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--time-build") {
        let mut took = Vec::new();
        for _ in 0..21 {
            let start = std::time::Instant::now();
            let s = server()?;
            took.push(start.elapsed().as_nanos());
            drop(s);
        }
        took.sort();
        println!("{}", took[took.len() / 2]);
        return Ok(());
    }
    server()?.serve_stdio().await?;
    Ok(())
}
"#;
    s
}

fn manifest(name: &str) -> String {
    let rt = runtime().0;
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-runtime = {{ path = {rt:?} }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1.2"
tokio = {{ version = "1.54", features = ["rt-multi-thread", "macros"] }}

[workspace]
"#
    )
}

struct Crate {
    dir: PathBuf,
    name: String,
    n: usize,
    layout: Layout,
}

/// A build's wall time and CPU time (user + sys of cargo and all it ran).
struct Took {
    wall: Duration,
    cpu: Duration,
}

/// The CPU time of this process's waited-for children so far (`cutime` + `cstime`):
/// cargo's, which includes the rustc processes cargo waited for.
fn children_cpu() -> Duration {
    static TICK_US: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let tick_us = *TICK_US.get_or_init(child::tick_us);
    let ticks = child::stat_ticks("/proc/self/stat", 16, 17);
    Duration::from_secs_f64(ticks as f64 * tick_us / 1e6)
}

impl Crate {
    fn generate(root: &Path, n: usize, layout: Layout) -> Result<Crate, String> {
        let name = match layout {
            Layout::Flat => format!("scaling_{n}"),
            Layout::Modules(per) => format!("scaling_{n}_in_modules_of_{per}"),
        };
        let dir = root.join(&name);
        std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("{}: {e}", dir.display()))?;
        let write = |p: PathBuf, text: &str| {
            std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
        };
        write(dir.join("Cargo.toml"), &manifest(&name))?;
        write(dir.join("src/main.rs"), &source(n, layout, None))?;
        // The workspace's versions, so nothing new is resolved or downloaded.
        let lock = workspace().join("Cargo.lock");
        if !dir.join("Cargo.lock").exists() {
            std::fs::copy(&lock, dir.join("Cargo.lock")).map_err(|e| format!("lock: {e}"))?;
        }
        Ok(Crate {
            dir,
            name,
            n,
            layout,
        })
    }

    fn cargo(&self, args: &[&str]) -> Result<Took, String> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let cpu = children_cpu();
        let start = Instant::now();
        let out = Command::new(cargo)
            .args(args)
            .args(["--offline", "--quiet"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", crates_target())
            .env_remove("RUSTFLAGS")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cargo: {e}"))?;
        let took = Took {
            wall: start.elapsed(),
            cpu: children_cpu().saturating_sub(cpu),
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = err.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "cargo {} in {} failed:\n{}",
                args.join(" "),
                self.dir.display(),
                tail.join("\n")
            ));
        }
        Ok(took)
    }

    fn clean(&self, release: bool) -> Result<(), String> {
        let mut args = vec!["clean", "-p", &self.name];
        if release {
            args.push("--release");
        }
        self.cargo(&args).map(drop)
    }

    fn binary(&self) -> PathBuf {
        crates_target().join("release").join(&self.name)
    }

    fn edit_middle(&self, times: u32) -> Result<(), String> {
        let p = self.dir.join("src/main.rs");
        std::fs::write(&p, source(self.n, self.layout, Some((self.n / 2, times))))
            .map_err(|e| format!("{}: {e}", p.display()))
    }
}

fn list(id: u64, cursor: Option<&str>) -> String {
    let cursor = cursor.map_or(String::new(), |c| format!(r#""cursor":"{c}","#));
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{cursor}{META}}}}}"#)
        + "\n"
}

fn call(id: u64, tool: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"tool_{tool}","arguments":{{"text":"x","count":3,"flag":true}},{META}}}}}"#
    ) + "\n"
}

/// Checks one `tools/list` page: `expected` tools, a next cursor when more follow.
fn check_page(answer: &str, expected: usize, more: bool) -> Result<Option<String>, String> {
    let v: serde_json::Value =
        serde_json::from_str(answer).map_err(|e| format!("tools/list answer: {e}: {answer}"))?;
    let tools = v["result"]["tools"].as_array().map_or(0, Vec::len);
    let cursor = v["result"]["nextCursor"].as_str().map(str::to_owned);
    if tools != expected || cursor.is_some() != more {
        let head: String = answer.chars().take(300).collect();
        return Err(format!(
            "tools/list: {tools} tools (expected {expected}), next cursor {cursor:?}: {head}"
        ));
    }
    Ok(cursor)
}

fn check_call(answer: &str, tool: usize) -> Result<(), String> {
    if answer.contains(&format!(r#""text":"{tool}:x:3:true""#)) {
        Ok(())
    } else {
        Err(format!(
            "tools/call tool_{tool}: unexpected answer: {answer}"
        ))
    }
}

/// The generated binary's own median of `Server::build()` (ns).
fn time_build(exe: &Path) -> Result<f64, String> {
    let out = Command::new(exe)
        .arg("--time-build")
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().parse() {
        Ok(ns) if out.status.success() => Ok(ns),
        _ => Err(format!("--time-build printed {text:?} ({})", out.status)),
    }
}

/// Spawn → first `tools/list` answered.
fn cold_start(exe: &Path, n: usize) -> Result<Duration, String> {
    let start = Instant::now();
    let mut s = StdioChild::spawn(Command::new(exe))?;
    let answer = s.round_trip(&list(1, None))?.to_owned();
    let took = start.elapsed();
    check_page(&answer, n.min(PAGE), n > PAGE)?;
    Ok(took)
}

/// RSS after paging the whole list and 50 calls; then µs per `tools/call` round trip.
fn steady(exe: &Path, n: usize, secs: f64) -> Result<(u64, f64), String> {
    let mut s = StdioChild::spawn(Command::new(exe))?;
    let mut id = 0;
    let mut cursor: Option<String> = None;
    let mut seen = 0;
    loop {
        id += 1;
        let answer = s.round_trip(&list(id, cursor.as_deref()))?.to_owned();
        let page = (n - seen).min(PAGE);
        seen += page;
        cursor = check_page(&answer, page, seen < n)?;
        if cursor.is_none() {
            break;
        }
    }
    for k in 0..50 {
        id += 1;
        let tool = (k * 7919) % n;
        let answer = s.round_trip(&call(id, tool))?.to_owned();
        check_call(&answer, tool)?;
    }
    std::thread::sleep(Duration::from_millis(100));
    let rss = s.rss_kib();
    for k in 0..200 {
        id += 1;
        let tool = (k * 31) % n;
        let answer = s.round_trip(&call(id, tool))?.to_owned();
        check_call(&answer, tool)?;
    }
    let start = Instant::now();
    let mut trips = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        id += 1;
        let tool = (id as usize * 7919) % n;
        let answer = s.round_trip(&call(id, tool))?.to_owned();
        check_call(&answer, tool)?;
        trips += 1;
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / trips.max(1) as f64;
    Ok((rss, us))
}

/// How one row of the table shows a measurement.
type Show<'a> = (&'a str, &'a dyn Fn(&Row) -> String);

#[derive(Default)]
struct Row {
    n: usize,
    release: f64,
    release_cpu: f64,
    release_in_modules: f64,
    rebuild_in_modules: f64,
    debug: f64,
    rebuild: f64,
    start_ms: f64,
    rss_mib: f64,
    call_us: f64,
    build_us: f64,
}

fn measure(root: &Path, n: usize, starts: usize, secs: f64) -> Result<Row, String> {
    let c = Crate::generate(root, n, Layout::Flat)?;
    eprintln!("scaling: N={n}: release build");
    c.clean(true)?;
    let release = c.cargo(&["build", "--release"])?;
    eprintln!("scaling: N={n}: release build, tools in modules of {MODULE}");
    let split = Crate::generate(root, n, Layout::Modules(MODULE))?;
    split.clean(true)?;
    let release_in_modules = split.cargo(&["build", "--release"])?.wall.as_secs_f64();
    split.clean(false)?;
    split.cargo(&["build"])?;
    split.edit_middle(1)?;
    let rebuild_in_modules = split.cargo(&["build"])?.wall.as_secs_f64();
    split.edit_middle(0)?;
    eprintln!("scaling: N={n}: debug build");
    c.clean(false)?;
    let debug = c.cargo(&["build"])?.wall.as_secs_f64();
    eprintln!("scaling: N={n}: rebuild after editing tool_{}", n / 2);
    c.edit_middle(1)?;
    let rebuild = c.cargo(&["build"])?.wall.as_secs_f64();
    // Back to the source the release binary was built from.
    c.edit_middle(0)?;
    let exe = c.binary();
    let mut times = Vec::with_capacity(starts);
    for _ in 0..starts {
        times.push(cold_start(&exe, n)?);
    }
    times.sort();
    let start_ms = times[times.len() / 2].as_secs_f64() * 1e3;
    let (rss, call_us) = steady(&exe, n, secs)?;
    let build_us = time_build(&exe)? / 1e3 / n as f64;
    Ok(Row {
        n,
        release: release.wall.as_secs_f64(),
        release_cpu: release.cpu.as_secs_f64(),
        release_in_modules,
        rebuild_in_modules,
        debug,
        rebuild,
        start_ms,
        rss_mib: rss as f64 / 1024.0,
        call_us,
        build_us,
    })
}

fn bench() -> Result<(), String> {
    let sizes: Vec<usize> = std::env::var("BENCH_SCALING_N")
        .unwrap_or_else(|_| "10,100,1000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .collect();
    if sizes.is_empty() {
        return Err("BENCH_SCALING_N names no size (e.g. `10,100`)".into());
    }
    let starts = env_f64("BENCH_STARTS", 9.0).max(1.0) as usize;
    let secs = env_f64("BENCH_SECS", 1.0);
    let root = target_root();
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    // The dependencies, built once for both profiles by a one-tool crate of the same shape.
    eprintln!("scaling: building the dependencies (once)");
    let warm = Crate::generate(&root, 1, Layout::Flat)?;
    warm.cargo(&["build", "--release"])?;
    warm.cargo(&["build"])?;
    let mut rows = Vec::new();
    for &n in &sizes {
        rows.push(measure(&root, n, starts, secs)?);
    }
    println!(
        "scaling benchmark: N tools (doc comment, three typed arguments each), stdio; crates in {}, mcp-runtime at {}",
        root.display(),
        runtime().0.display()
    );
    let cell = |f: &dyn Fn(&Row) -> String| -> String {
        rows.iter().map(|r| format!(" {:>9}", f(r))).collect()
    };
    println!("{:<44}{}", "N tools", cell(&|r| r.n.to_string()));
    let rows_of: [Show<'_>; 10] = [
        ("release build of the crate (s)", &|r| {
            format!("{:.1}", r.release)
        }),
        ("  its CPU time, user + sys (s)", &|r| {
            format!("{:.1}", r.release_cpu)
        }),
        ("  tools in modules of 100: release build (s)", &|r| {
            format!("{:.1}", r.release_in_modules)
        }),
        ("cold debug build of the crate (s)", &|r| {
            format!("{:.1}", r.debug)
        }),
        ("rebuild after editing the middle tool (s)", &|r| {
            format!("{:.1}", r.rebuild)
        }),
        ("  tools in modules of 100: rebuild (s)", &|r| {
            format!("{:.1}", r.rebuild_in_modules)
        }),
        ("cold start, spawn -> tools/list (ms)", &|r| {
            format!("{:.2}", r.start_ms)
        }),
        ("idle RSS after first calls (MiB)", &|r| {
            format!("{:.1}", r.rss_mib)
        }),
        ("tools/call round trip on stdio (us)", &|r| {
            format!("{:.1}", r.call_us)
        }),
        ("Server::build in process, per tool (us)", &|r| {
            format!("{:.2}", r.build_us)
        }),
    ];
    for (name, f) in rows_of {
        println!("{name:<44}{}", cell(f));
    }
    // Per-tool cost between consecutive sizes.
    for w in rows.windows(2) {
        let dn = (w[1].n - w[0].n) as f64;
        println!(
            "per tool, N {} -> {}: start {:.1} us, RSS {:.1} KiB, release build {:.1} ms \
             (CPU {:.1} ms; in modules of {MODULE}: {:.1} ms)",
            w[0].n,
            w[1].n,
            (w[1].start_ms - w[0].start_ms) * 1e3 / dn,
            (w[1].rss_mib - w[0].rss_mib) * 1024.0 / dn,
            (w[1].release - w[0].release) * 1e3 / dn,
            (w[1].release_cpu - w[0].release_cpu) * 1e3 / dn,
            (w[1].release_in_modules - w[0].release_in_modules) * 1e3 / dn
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; nothing else is taken.
    match bench() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scaling bench: {e}");
            ExitCode::FAILURE
        }
    }
}

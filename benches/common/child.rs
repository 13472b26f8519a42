//! A server child process on stdio, for the benches that measure one (`stdio`,
//! `scaling`): newline-delimited JSON-RPC round trips, and its CPU time and RSS from
//! `/proc`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Fields `a` and `b` (numbered as in proc(5): 14 and 15 are `utime` and `stime`, 16 and
/// 17 `cutime` and `cstime`) of the `/proc/<pid>/stat` file at `path`, summed, in clock
/// ticks; 0 for what cannot be read.
#[allow(dead_code)] // not every bench reads it
pub fn stat_ticks(path: &str, a: usize, b: usize) -> u64 {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let field = |n: usize| rest.split_whitespace().nth(n - 3)?.parse::<u64>().ok();
    field(a).unwrap_or(0) + field(b).unwrap_or(0)
}

/// Microseconds per clock tick (`getconf CLK_TCK`; 100 ticks per second if that fails).
#[allow(dead_code)] // not every bench reads it
pub fn tick_us() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().ok();
    let tck: f64 = out
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0);
    1e6 / tck
}

/// The child; killed when dropped.
pub struct StdioChild {
    child: Child,
    /// `None` once [`StdioChild::close`] closed it.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl StdioChild {
    /// Starts `cmd` with piped stdin and stdout, `RUST_LOG=warn` (unless `cmd` sets
    /// `RUST_LOG`) and stderr discarded.
    pub fn spawn(mut cmd: Command) -> Result<StdioChild, String> {
        let what = format!("{:?}", cmd.get_program());
        if !cmd.get_envs().any(|(k, _)| k == "RUST_LOG") {
            cmd.env("RUST_LOG", "warn");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawn {what}: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the child".into());
        };
        Ok(StdioChild {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            line: String::new(),
        })
    }

    /// Writes `req` (one line, newline included) and reads one line back.
    pub fn round_trip(&mut self, req: &str) -> Result<&str, String> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        stdin
            .write_all(req.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("write: {e}"))?;
        self.line.clear();
        match self.stdout.read_line(&mut self.line) {
            Ok(0) => Err("the server closed stdout".into()),
            Ok(_) => Ok(&self.line),
            Err(e) => Err(format!("read: {e}")),
        }
    }

    /// Closes the child's stdin, the end of its input; the child, to wait for.
    #[allow(dead_code)] // not every bench ends its children this way
    pub fn close(&mut self) -> &mut Child {
        self.stdin = None;
        &mut self.child
    }

    /// User plus system CPU time so far, in clock ticks.
    #[allow(dead_code)] // not every bench reads it
    pub fn cpu_ticks(&self) -> u64 {
        stat_ticks(&format!("/proc/{}/stat", self.child.id()), 14, 15)
    }

    /// Resident set size now, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// The anonymous part of the resident set now, in KiB: heap, stacks and written
    /// pages, the memory this process alone holds (the rest is pages of files, its binary
    /// and libraries, shared through the page cache).
    #[allow(dead_code)] // not every bench that includes this file reads it
    pub fn anon_kib(&self) -> u64 {
        self.status_kib("RssAnon:")
    }

    /// A `kB` field of `/proc/<pid>/status`.
    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

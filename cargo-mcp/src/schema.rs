//! `cargo mcp schema`: runs a server on stdio and prints its four lists.

use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The four list methods and the key of their items, in the order they are printed.
const LISTS: [(&str, &str); 4] = [
    ("tools/list", "tools"),
    ("prompts/list", "prompts"),
    ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates"),
];

/// How long a `cargo` command gets to answer all the lists. `cargo run` (the default
/// command) may first have to build the server and its dependencies from scratch, which
/// can take minutes on a slow machine or a cold cache.
const BUILD_DEADLINE: Duration = Duration::from_secs(600);

/// How long any other command gets to answer all the lists. A built server answers in
/// well under a second; a program that is not a server (`sleep`, a binary that waits
/// for a flag before serving stdio) should fail within seconds, not after ten minutes.
const RUN_DEADLINE: Duration = Duration::from_secs(30);

/// The longest line read from the server: one response holds a whole page of a list, far
/// below this; a program that writes an endless line is stopped here, not when memory
/// runs out.
const MAX_LINE: usize = 64 << 20;

/// The command run when none is given: the server of the current folder.
fn default_command() -> Vec<String> {
    vec!["cargo".into(), "run".into(), "--quiet".into()]
}

/// The deadline for `command`: `timeout` (from `--timeout SECS`) when given, else the
/// long one if the program is `cargo` (which may be building), else the short one.
pub(crate) fn deadline_for(command: &[String], timeout: Option<Duration>) -> Duration {
    if let Some(t) = timeout {
        return t;
    }
    // Compare the file name, so `/usr/local/bin/cargo`, `$CARGO` (a rustup toolchain's
    // `.../bin/cargo`) and `cargo.exe` on Windows all count as cargo.
    let is_cargo = command.first().is_some_and(|program| {
        std::path::Path::new(program)
            .file_stem()
            .is_some_and(|stem| stem == "cargo")
    });
    if is_cargo {
        BUILD_DEADLINE
    } else {
        RUN_DEADLINE
    }
}

/// Runs `command` (default `cargo run --quiet`) and prints its lists, or compares them
/// with the body of the insta snapshot `check`. `timeout` overrides the deadline
/// [`deadline_for`] picks.
pub(crate) fn run(
    command: Vec<String>,
    check: Option<std::path::PathBuf>,
    timeout: Option<Duration>,
) -> Result<(), String> {
    let command = if command.is_empty() {
        default_command()
    } else {
        command
    };
    let doc = lists_of(&command, deadline_for(&command, timeout))?;
    match check {
        None => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{doc}").map_err(|e| e.to_string())
        }
        Some(path) => {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let stored = snapshot_body(&text).trim_end();
            if stored == doc.trim_end() {
                Ok(())
            } else {
                Err(format!(
                    "the server's lists differ from {}; run its tests and review the snapshot (`cargo insta review`)\n{}",
                    path.display(),
                    difference(stored, doc.trim_end())
                ))
            }
        }
    }
}

/// At most this many lines of a difference are shown; the rest is counted.
const MAX_DIFF_LINES: usize = 60;

/// A unified diff from the snapshot's lists to the server's (3 lines of context), cut at
/// [`MAX_DIFF_LINES`]: what changed, without reading both documents.
fn difference(stored: &str, served: &str) -> String {
    let diff = similar::TextDiff::from_lines(stored, served)
        .unified_diff()
        .context_radius(3)
        .header("snapshot", "server")
        .to_string();
    let lines: Vec<&str> = diff.lines().collect();
    if lines.len() <= MAX_DIFF_LINES {
        return diff.trim_end().to_owned();
    }
    format!(
        "{}\n... {} more lines of difference",
        lines[..MAX_DIFF_LINES].join("\n"),
        lines.len() - MAX_DIFF_LINES
    )
}

/// The content of an insta snapshot: what follows its `---` header.
fn snapshot_body(text: &str) -> &str {
    match text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
    {
        Some((_, body)) => body,
        None => text,
    }
}

/// Kills the server when dropped (on every path, including errors).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lists of the server `command` serves on stdio, as pretty JSON with sorted keys.
/// All of them must have come within `deadline` of starting the command.
pub(crate) fn lists_of(command: &[String], deadline: Duration) -> Result<String, String> {
    let (program, args) = command.split_first().ok_or("no command")?;
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let mut running = Running(child);
    let mut stdin = running.0.stdin.take().ok_or("no stdin")?;
    let stdout = running.0.stdout.take().ok_or("no stdout")?;

    // Read on a thread, so a silent server ends in a timeout rather than a hang. `None`
    // is a line longer than MAX_LINE (the last message).
    let (tx, rx) = std::sync::mpsc::channel::<Option<String>>();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            let limit = MAX_LINE as u64 + 1;
            match (&mut reader).take(limit).read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
                let _ = tx.send(None);
                break;
            }
            let line = String::from_utf8_lossy(&line).trim_end().to_owned();
            if tx.send(Some(line)).is_err() {
                break;
            }
        }
    });
    let started = Instant::now();
    let mut next_id = 0u64;
    let mut doc = Map::new();
    for (method, key) in LISTS {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        // Every cursor given for this list: one that comes back means pages without end.
        let mut cursors = std::collections::HashSet::new();
        loop {
            next_id += 1;
            // A server that is gone is named as such, not as the broken pipe it left.
            let exited = |running: &mut Running, e: String| match running.0.try_wait() {
                Ok(Some(status)) => {
                    format!(
                        "the server exited ({status}) before answering (does it serve stdio by default?)"
                    )
                }
                _ => e,
            };
            send(&mut stdin, next_id, method, cursor.take())
                .map_err(|e| exited(&mut running, e))?;
            let reply = receive(&rx, next_id, started.checked_add(deadline))
                .map_err(|e| match e {
                    Silence::TimedOut => too_slow(command, method, deadline),
                    Silence::Closed => {
                        "the server exited before answering (does it serve stdio by default?)"
                            .to_owned()
                    }
                    Silence::TooLong => format!(
                        "`{}` wrote a line longer than {} MiB to stdout instead of answering \
                         {method}; is this an MCP server?",
                        command.join(" "),
                        MAX_LINE >> 20
                    ),
                })
                .map_err(|e| exited(&mut running, e))?;
            if let Some(err) = reply.get("error") {
                // A server without prompts (say) does not have the method: an empty list.
                if err["code"] == -32601 {
                    break;
                }
                return Err(format!("{method} failed: {err}"));
            }
            let Some(result) = reply.get("result").filter(|r| r.is_object()) else {
                return Err(format!(
                    "{method}: not a JSON-RPC response (no `result` object nor `error`): {reply}; is this an MCP server?"
                ));
            };
            items.extend(result[key].as_array().cloned().unwrap_or_default());
            match result.get("nextCursor") {
                Some(c) if !c.is_null() => {
                    if !cursors.insert(c.to_string()) {
                        return Err(format!(
                            "{method} gave the nextCursor {c} a second time: its pages never \
                             end (a bug of the server's pagination)"
                        ));
                    }
                    cursor = Some(c.clone());
                }
                _ => break,
            }
        }
        doc.insert(key.to_owned(), Value::Array(items));
    }
    drop(stdin); // end of input: the server exits
    serde_json::to_string_pretty(&Value::Object(doc)).map_err(|e| e.to_string())
}

fn send(
    stdin: &mut ChildStdin,
    id: u64,
    method: &str,
    cursor: Option<Value>,
) -> Result<(), String> {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "cargo-mcp", "version": env!("CARGO_PKG_VERSION")},
        }
    });
    if let Some(c) = cursor {
        params["cursor"] = c;
    }
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    writeln!(stdin, "{msg}")
        .and_then(|()| stdin.flush())
        .map_err(|e| format!("the server closed its input: {e}"))
}

/// Why [`receive`] got no response.
enum Silence {
    /// The deadline passed first.
    TimedOut,
    /// The server closed its output.
    Closed,
    /// The server wrote a line longer than [`MAX_LINE`].
    TooLong,
}

/// The error for a server that had not answered `method` when `deadline` expired: it
/// names the command and the deadline, and how to wait longer, since the usual cause on
/// a slow machine is only a slow start.
fn too_slow(command: &[String], method: &str, deadline: Duration) -> String {
    format!(
        "`{}` had not answered {method} when the {} s deadline expired; \
         if it is a server that is only slow to start, wait longer with \
         `cargo mcp schema --timeout SECS -- ...`",
        command.join(" "),
        deadline.as_secs()
    )
}

/// The response with `id`, if it comes before `until`; notifications and non-JSON lines
/// are skipped.
fn receive(
    rx: &std::sync::mpsc::Receiver<Option<String>>,
    id: u64,
    until: Option<Instant>,
) -> Result<Value, Silence> {
    loop {
        // No `until` means the deadline is too far off for the clock to hold: wait on.
        let line = match until {
            Some(until) => {
                let left = until
                    .checked_duration_since(Instant::now())
                    .ok_or(Silence::TimedOut)?;
                rx.recv_timeout(left).map_err(|e| match e {
                    std::sync::mpsc::RecvTimeoutError::Timeout => Silence::TimedOut,
                    std::sync::mpsc::RecvTimeoutError::Disconnected => Silence::Closed,
                })?
            }
            None => rx.recv().map_err(|_| Silence::Closed)?,
        };
        let Some(line) = line else {
            return Err(Silence::TooLong);
        };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v["id"] == json!(id) {
            return Ok(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_server_that_exits_is_an_error_not_a_hang() {
        let err = lists_of(&cmd(&["true"]), RUN_DEADLINE).unwrap_err();
        assert!(
            err.contains("before answering") || err.contains("closed its input"),
            "{err}"
        );
    }

    /// A program that echoes its input (`cat`) answers every request with the request:
    /// no result, so no lists.
    #[test]
    fn an_echo_is_no_server() {
        let err = lists_of(&cmd(&["cat"]), RUN_DEADLINE).unwrap_err();
        assert!(err.contains("not a JSON-RPC response"), "{err}");
    }

    /// A program that writes an endless line (`cat /dev/zero`) was read into memory until
    /// the allocation failed and the process aborted: a line is cut at `MAX_LINE` now.
    /// (The program here stops at 100 MB, so the test also ends without the limit.)
    #[test]
    fn an_overlong_line_is_an_error_not_an_abort() {
        let err = lists_of(
            &cmd(&["sh", "-c", "head -c 100000000 /dev/zero"]),
            Duration::from_secs(60),
        )
        .unwrap_err();
        assert!(err.contains("a line longer than 64 MiB"), "{err}");
    }

    /// A server whose every page gives the same `nextCursor` was asked again until the
    /// deadline, then reported as too slow to answer (with a hint to wait longer).
    #[test]
    fn a_cursor_that_comes_back_is_an_error_not_a_timeout() {
        let server = r#"while IFS= read -r l; do
            id=$(printf %s "$l" | sed 's/.*"id":\([0-9]*\).*/\1/')
            printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[],"nextCursor":"same"}}\n' "$id"
        done"#;
        let started = Instant::now();
        let err = lists_of(&cmd(&["sh", "-c", server]), Duration::from_secs(5)).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(4), "{err}");
        assert!(
            err.contains("tools/list gave the nextCursor \"same\" a second time"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_program_is_named() {
        let err = lists_of(&cmd(&["/nonexistent/mcp-server"]), RUN_DEADLINE).unwrap_err();
        assert!(err.contains("cannot run /nonexistent/mcp-server"), "{err}");
    }

    /// Only cargo may be building the server, so only cargo gets minutes; any other
    /// program gets the short deadline, and `--timeout` overrides both.
    #[test]
    fn the_long_deadline_is_for_cargo_only() {
        assert_eq!(RUN_DEADLINE, Duration::from_secs(30));
        assert_eq!(deadline_for(&cmd(&["sleep", "100"]), None), RUN_DEADLINE);
        assert_eq!(
            deadline_for(&cmd(&["./target/debug/my-server"]), None),
            RUN_DEADLINE
        );
        // A program merely named like cargo is not cargo.
        assert_eq!(
            deadline_for(&cmd(&["cargo-mcp-server"]), None),
            RUN_DEADLINE
        );
        for cargo in ["cargo", "/home/me/.cargo/bin/cargo", "cargo.exe"] {
            assert_eq!(
                deadline_for(&cmd(&[cargo, "run", "--quiet"]), None),
                BUILD_DEADLINE,
                "{cargo}"
            );
        }
        let five = Some(Duration::from_secs(5));
        assert_eq!(
            deadline_for(&cmd(&["cargo", "run"]), five),
            Duration::from_secs(5)
        );
        assert_eq!(
            deadline_for(&cmd(&["sleep", "100"]), five),
            Duration::from_secs(5)
        );
    }

    /// The command `run` uses when given none is cargo's, so it keeps the long deadline.
    #[test]
    fn the_default_command_gets_the_build_deadline() {
        assert_eq!(deadline_for(&default_command(), None), BUILD_DEADLINE);
    }

    /// A deadline too far off for the clock (`--timeout` near `u64::MAX`) waits on rather
    /// than panicking on the overflow.
    #[test]
    fn a_huge_timeout_does_not_overflow() {
        let err = lists_of(&cmd(&["cat"]), Duration::from_secs(u64::MAX)).unwrap_err();
        assert!(err.contains("not a JSON-RPC response"), "{err}");
    }

    #[test]
    fn a_silent_program_times_out_naming_itself_and_the_deadline() {
        let started = Instant::now();
        let err = lists_of(&cmd(&["sleep", "100"]), Duration::from_secs(1)).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(20), "{err}");
        assert!(err.contains("`sleep 100`"), "{err}");
        assert!(err.contains("tools/list"), "{err}");
        assert!(err.contains("1 s deadline"), "{err}");
        assert!(err.contains("--timeout SECS"), "{err}");
    }

    #[test]
    fn snapshot_bodies_follow_the_header() {
        assert_eq!(
            snapshot_body("---\nsource: tests/x.rs\n---\n{\"a\": 1}\n"),
            "{\"a\": 1}\n"
        );
        assert_eq!(snapshot_body("{}"), "{}");
    }

    #[test]
    fn a_difference_is_shown_as_a_unified_diff_and_cut() {
        let d = difference(
            "{\n  \"a\": 1,\n  \"b\": 2\n}",
            "{\n  \"a\": 1,\n  \"b\": 3\n}",
        );
        assert!(d.starts_with("--- snapshot\n+++ server\n@@"), "{d}");
        assert!(d.contains("\n-  \"b\": 2\n+  \"b\": 3"), "{d}");
        let old: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let d = difference(&old, "");
        assert_eq!(d.lines().count(), MAX_DIFF_LINES + 1, "{d}");
        assert!(d.ends_with("... 143 more lines of difference"), "{d}");
    }
}

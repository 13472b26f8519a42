//! `cargo mcp schema`: runs a server on stdio and prints its four lists.

use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The four list methods and the key of their items, in the order they are printed.
const LISTS: [(&str, &str); 4] = [
    ("tools/list", "tools"),
    ("prompts/list", "prompts"),
    ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates"),
];

/// How long the server gets to answer all the lists (building it included).
const DEADLINE: Duration = Duration::from_secs(600);

/// Runs `command` (default `cargo run --quiet`) and prints its lists, or compares them
/// with the body of the insta snapshot `check`.
pub(crate) fn run(command: Vec<String>, check: Option<std::path::PathBuf>) -> Result<(), String> {
    let command = if command.is_empty() {
        vec!["cargo".into(), "run".into(), "--quiet".into()]
    } else {
        command
    };
    let doc = lists_of(&command)?;
    match check {
        None => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{doc}").map_err(|e| e.to_string())
        }
        Some(path) => {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if snapshot_body(&text).trim_end() == doc.trim_end() {
                Ok(())
            } else {
                Err(format!(
                    "the server's lists differ from {}; run its tests and review the snapshot (`cargo insta review`)",
                    path.display()
                ))
            }
        }
    }
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
pub(crate) fn lists_of(command: &[String]) -> Result<String, String> {
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

    // Read on a thread, so a silent server ends in a timeout rather than a hang.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
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
            let reply = receive(&rx, next_id, started).map_err(|e| exited(&mut running, e))?;
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
                Some(c) if !c.is_null() => cursor = Some(c.clone()),
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

/// The response with `id`; notifications and non-JSON lines are skipped.
fn receive(
    rx: &std::sync::mpsc::Receiver<String>,
    id: u64,
    started: Instant,
) -> Result<Value, String> {
    loop {
        let left = DEADLINE
            .checked_sub(started.elapsed())
            .ok_or("the server did not answer in time")?;
        let line = rx.recv_timeout(left).map_err(|e| match e {
            std::sync::mpsc::RecvTimeoutError::Timeout => {
                "the server did not answer in time".to_owned()
            }
            std::sync::mpsc::RecvTimeoutError::Disconnected => {
                "the server exited before answering (does it serve stdio by default?)".to_owned()
            }
        })?;
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
        let err = lists_of(&cmd(&["true"])).unwrap_err();
        assert!(
            err.contains("before answering") || err.contains("closed its input"),
            "{err}"
        );
    }

    /// A program that echoes its input (`cat`) answers every request with the request:
    /// no result, so no lists.
    #[test]
    fn an_echo_is_no_server() {
        let err = lists_of(&cmd(&["cat"])).unwrap_err();
        assert!(err.contains("not a JSON-RPC response"), "{err}");
    }

    #[test]
    fn a_missing_program_is_named() {
        let err = lists_of(&cmd(&["/nonexistent/mcp-server"])).unwrap_err();
        assert!(err.contains("cannot run /nonexistent/mcp-server"), "{err}");
    }

    #[test]
    fn snapshot_bodies_follow_the_header() {
        assert_eq!(
            snapshot_body("---\nsource: tests/x.rs\n---\n{\"a\": 1}\n"),
            "{\"a\": 1}\n"
        );
        assert_eq!(snapshot_body("{}"), "{}");
    }
}

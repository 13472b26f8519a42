//! stdio over a real child process: framing, concurrency, cancellation, EOF.

mod common;

use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Stdio_ {
    child: ChildGuard,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Stdio_ {
    fn spawn(example_name: &str, args: &[&str]) -> Self {
        Self::spawn_with(example_name, args, &[])
    }

    /// `spawn`, with `envs` set for the child too.
    fn spawn_with(example_name: &str, args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(example(example_name))
            .args(args)
            .env("RUST_LOG", "debug")
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Stdio_ {
            child: ChildGuard(child),
            stdin,
            lines: rx,
        }
    }

    fn conformance() -> Self {
        Self::spawn("conformance", &["--stdio"])
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        self.send_raw(format!("{v}\n").as_bytes());
    }

    /// The next stdout line, which must be one JSON-RPC message.
    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a line on stdout");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert!(
            !(v.get("method").is_some() && v.get("id").is_some()),
            "the server sent a request: {v}"
        );
        v
    }

    fn nothing_within(&self, d: Duration) -> bool {
        self.lines.recv_timeout(d).is_err()
    }
}

/// The child's exit status, which must come within 5 s of `after`.
fn exit_within_5s(child: &mut ChildGuard, after: &str) -> std::process::ExitStatus {
    exit_within(child, Duration::from_secs(5), after)
}

/// The child's exit status, which must come within `limit`.
fn exit_within(child: &mut ChildGuard, limit: Duration, after: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < limit,
            "did not exit {limit:?} after {after}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn call(id: Value, name: &str) -> Value {
    request(id, "tools/call", json!({"name": name}))
}

/// A call of the progress fixture (~100 ms) that asks for progress, with token "p".
fn call_with_progress(id: Value) -> Value {
    let mut body = call(id, "test_tool_with_progress");
    body["params"]["_meta"]["progressToken"] = json!("p");
    body
}

#[test]
fn discover_first_and_only_json_on_stdout() {
    let mut s = Stdio_::conformance();
    s.send(&request(json!(1), "server/discover", json!({})));
    let v = s.recv();
    assert_eq!(v["id"], 1);
    assert_eq!(
        v["result"]["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    // RUST_LOG=debug wrote logs, but only to stderr: the next stdout line is the answer.
    s.send(&request(json!(2), "tools/list", json!({})));
    assert_eq!(s.recv()["id"], 2);
}

#[test]
fn framing_errors_keep_the_stream_in_sync() {
    let mut s = Stdio_::conformance();
    s.send_raw(b"this is not json\n");
    let v = s.recv();
    assert_eq!(v["error"]["code"], -32700);
    assert!(v.get("id").is_none());
    // Blank lines are ignored; CRLF is accepted.
    s.send_raw(b"\n   \n");
    s.send_raw(format!("{}\r\n", request(json!(3), "server/discover", json!({}))).as_bytes());
    assert_eq!(s.recv()["id"], 3);
    // A UTF-8 byte order mark before a message is skipped, as RFC 8259 allows.
    let bom = format!(
        "\u{feff}{}\n",
        request(json!(5), "server/discover", json!({}))
    );
    s.send_raw(bom.as_bytes());
    assert_eq!(s.recv()["id"], 5);
    // A line over the 4 MiB cap is discarded and answered with -32700.
    let mut big = vec![b'x'; 5 * 1024 * 1024];
    big.push(b'\n');
    s.send_raw(&big);
    let v = s.recv();
    assert_eq!(v["error"]["code"], -32700);
    s.send(&request(json!(4), "server/discover", json!({})));
    assert_eq!(s.recv()["id"], 4);
    // A member name given twice: JSON, refused, and the id it carries is named (MSG-04).
    let twice = r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"a":1,"a":2}}"#;
    s.send_raw(format!("{twice}\n").as_bytes());
    let v = s.recv();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(41), json!(-32600)),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("duplicate"),
        "{v}"
    );
    // Notifications get no answer.
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/unknown"}));
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}));
    assert!(s.nothing_within(Duration::from_millis(300)));
    // Batches are refused.
    s.send(&json!([request(json!(5), "server/discover", json!({}))]));
    assert_eq!(s.recv()["error"]["code"], -32600);
    // A response is refused without an id: its id is one of the client's own requests
    // (here one in flight), which must get its own answer, once.
    s.send(&call(json!(6), "test_tool_with_progress"));
    s.send(&json!({"jsonrpc": "2.0", "id": 6, "result": {}}));
    let refused = s.recv();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused.get("id").is_none(), "{refused}");
    let answered = s.recv();
    assert_eq!(answered["id"], 6, "{answered}");
    assert!(answered.get("result").is_some(), "{answered}");
}

#[test]
fn requests_run_concurrently() {
    let mut s = Stdio_::conformance();
    // The progress tool takes ~100 ms; the simple one answers at once.
    s.send(&call(json!("slow"), "test_tool_with_progress"));
    s.send(&call(json!("fast"), "test_simple_text"));
    assert_eq!(s.recv()["id"], "fast");
    assert_eq!(s.recv()["id"], "slow");
}

#[test]
fn progress_goes_on_stdout_before_the_response() {
    let mut s = Stdio_::conformance();
    s.send(&call_with_progress(json!(9)));
    let mut seen = Vec::new();
    loop {
        let v = s.recv();
        if v.get("id").is_some() {
            assert_eq!(v["id"], 9);
            break;
        }
        assert_eq!(v["method"], "notifications/progress");
        assert_eq!(v["params"]["progressToken"], "p");
        seen.push(v["params"]["progress"].as_f64().unwrap());
    }
    assert_eq!(seen, [0.0, 50.0, 100.0]);
}

#[test]
fn cancelled_requests_get_no_response() {
    let mut s = Stdio_::conformance();
    s.send(&call(json!(41), "test_tool_with_progress"));
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 41, "reason": "user"}}));
    s.send(&call(json!(42), "test_simple_text"));
    assert_eq!(s.recv()["id"], 42);
    assert!(
        s.nothing_within(Duration::from_millis(500)),
        "no response after cancellation"
    );
}

#[test]
fn errors_and_capabilities_per_request() {
    let mut s = Stdio_::conformance();
    s.send(&call(json!(1), "test_missing_capability"));
    let v = s.recv();
    assert_eq!(v["error"]["code"], -32021);
    assert_eq!(
        v["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    let mut body = call(json!(2), "test_missing_capability");
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    s.send(&body);
    assert_eq!(s.recv()["result"]["content"][0]["text"], "Success");
    s.send(&call(json!(3), "test_error_handling"));
    assert_eq!(s.recv()["result"]["isError"], true);
    s.send(&request(json!(4), "initialize", json!({})));
    assert_eq!(s.recv()["error"]["code"], -32601);
}

#[test]
fn exits_cleanly_on_eof() {
    let mut s = Stdio_::conformance();
    s.send(&call(json!(1), "test_tool_with_progress"));
    drop(s.stdin.take());
    // The in-flight request still completes, then the process exits 0.
    assert_eq!(s.recv()["id"], 1);
    let status = exit_within_5s(&mut s.child, "EOF");
    assert!(status.success());
}

/// A request that completes in its first poll is answered by the thread that read it;
/// the log message it sent before answering still reaches stdout first, every time.
#[test]
fn an_answer_given_at_once_still_comes_after_its_notifications() {
    let mut s = Stdio_::conformance();
    for id in 1..=100 {
        let mut req = call(json!(id), "test_logging_tool");
        req["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
        s.send(&req);
        let first = s.recv();
        assert_eq!(first["method"], "notifications/message", "{first}");
        assert_eq!(first["params"]["data"], "test_logging_tool ran", "{first}");
        let answer = s.recv();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            "Logging tool completed."
        );
    }
}

/// Three writers share stdout: the reading thread (answers given at once), the workers
/// (a spawned request's answer, written by its task when stdout is free) and the
/// forwarder (what was queued). Requests of both kinds sent at once, without waiting:
/// every one is answered exactly once, each spawned one after its own progress.
#[test]
fn spawned_and_immediate_answers_interleave_without_loss_or_reordering() {
    let mut s = Stdio_::conformance();
    let mut batch = String::new();
    for id in 0..60 {
        let body = if id % 2 == 0 {
            let mut body = call_with_progress(json!(id));
            body["params"]["_meta"]["progressToken"] = json!(format!("p{id}"));
            body
        } else {
            call(json!(id), "test_simple_text")
        };
        batch += &format!("{body}\n");
    }
    s.send_raw(batch.as_bytes());
    let mut progress: std::collections::HashMap<String, Vec<f64>> = Default::default();
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 60 {
        let v = s.recv();
        if let Some(id) = v.get("id") {
            let id = id.as_u64().expect("a numeric id");
            assert!(answered.insert(id), "{id} answered twice");
            assert!(v.get("result").is_some(), "{v}");
            if id % 2 == 0 {
                let seen = progress.get(&format!("p{id}")).cloned().unwrap_or_default();
                assert_eq!(
                    seen,
                    [0.0, 50.0, 100.0],
                    "progress of {id} before its answer"
                );
            }
            continue;
        }
        assert_eq!(v["method"], "notifications/progress", "{v}");
        let token = v["params"]["progressToken"].as_str().unwrap().to_owned();
        let n: u64 = token[1..].parse().unwrap();
        assert!(
            !answered.contains(&n),
            "progress of {n} after its answer: {v}"
        );
        progress
            .entry(token)
            .or_default()
            .push(v["params"]["progress"].as_f64().unwrap());
    }
    assert!(
        s.nothing_within(Duration::from_millis(300)),
        "a line after all answers"
    );
}

/// SIGTERM while stdin is still open (the reading thread is blocked in a read): the
/// request in flight finishes and is answered, and the process exits 0.
#[test]
fn sigterm_with_stdin_open_drains_and_exits() {
    signal_with_stdin_open_drains_and_exits("-TERM");
}

/// SIGINT (Ctrl-C at a terminal) does the same.
#[test]
fn sigint_with_stdin_open_drains_and_exits() {
    signal_with_stdin_open_drains_and_exits("-INT");
}

fn signal_with_stdin_open_drains_and_exits(signal: &str) {
    let mut s = Stdio_::conformance();
    s.send(&call_with_progress(json!(1)));
    // Its first progress report: the request is in flight, 100 ms from its answer.
    let first = s.recv();
    assert_eq!(first["method"], "notifications/progress", "{first}");
    let pid = s.child.0.id().to_string();
    let killed = Command::new("kill").args([signal, &pid]).status().unwrap();
    assert!(killed.success());
    let answer = loop {
        let v = s.recv();
        if v.get("id").is_some() {
            break v;
        }
    };
    assert_eq!(answer["id"], 1);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Progress test completed."
    );
    let status = exit_within_5s(&mut s.child, &format!("kill {signal} with stdin open"));
    assert!(status.success(), "{status}");
    assert!(s.stdin.is_some(), "stdin was open all along");
}

/// A handler that yields only through tokio's cooperative budget (a long computation
/// calling `consume_budget`) is spawned after its first poll like any other: requests
/// sent after it are answered meanwhile, and the request time limit cuts it off.
#[test]
fn a_handler_yielding_only_through_the_budget_blocks_nothing() {
    let mut s = Stdio_::spawn_with(
        "conformance",
        &["--stdio"],
        &[("MCP_REQUEST_TIMEOUT_MS", "500")],
    );
    let mut busy = call(json!(1), "busy_compute");
    busy["params"]["arguments"] = json!({"millis": 5000});
    let start = Instant::now();
    s.send(&busy);
    s.send(&call(json!(2), "test_simple_text"));
    let first = s.recv();
    assert_eq!(
        first["id"], 2,
        "the quick request waited for the busy one: {first}"
    );
    let second = s.recv();
    assert_eq!(second["id"], 1, "{second}");
    assert_eq!(second["error"]["code"], -32603, "{second}");
    assert!(
        second["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{second}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "the busy handler ran to its end ({:?})",
        start.elapsed()
    );
}

/// stdin whose file description is non-blocking (the flag is shared with whoever else
/// holds that pipe, such as a parent that made its end non-blocking): the server waits for
/// input instead of taking "would block" for the end of it.
#[test]
fn a_non_blocking_stdin_is_waited_on() {
    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    let (read, mut write) = std::io::pipe().unwrap();
    let flags = fcntl_getfl(&read).unwrap();
    fcntl_setfl(&read, flags | OFlags::NONBLOCK).unwrap();
    let mut child = Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(read)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut guard = ChildGuard(child);
    // Nothing to read for a while: a read now would say "would block".
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        guard.0.try_wait().unwrap().is_none(),
        "the server ended before any input"
    );
    for id in 1..=3 {
        writeln!(write, "{}", call(json!(id), "test_simple_text")).unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], id, "{v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(write);
    let status = guard.0.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// stdout whose file description is non-blocking, to a client that reads late: the
/// server waits for room in the pipe instead of taking "would block" for a closed stdout.
#[test]
fn a_non_blocking_stdout_is_waited_on() {
    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    let (read, write) = std::io::pipe().unwrap();
    let flags = fcntl_getfl(&write).unwrap();
    fcntl_setfl(&write, flags | OFlags::NONBLOCK).unwrap();
    let mut child = Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(write)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    let _guard = ChildGuard(child);
    // Far more than a pipe holds (each answer is a whole tools/list), before any is read.
    let n = 60;
    for id in 1..=n {
        writeln!(stdin, "{}", request(json!(id), "tools/list", json!({}))).unwrap();
    }
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut ids = Vec::new();
    for line in BufReader::new(read).lines().take(n) {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        assert!(v["result"]["tools"].is_array(), "{v}");
        ids.push(v["id"].as_i64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (1..=n as i64).collect::<Vec<_>>());
}

#[test]
fn tools_list_is_identical_across_restarts() {
    let get = || {
        let mut s = Stdio_::conformance();
        s.send(&request(json!(1), "tools/list", json!({})));
        s.lines.recv_timeout(Duration::from_secs(10)).unwrap()
    };
    assert_eq!(get(), get());
}

#[test]
fn the_notes_example_works_over_stdio_and_http() {
    let mut s = Stdio_::spawn("notes", &[]);
    s.send(&request(
        json!(1),
        "tools/call",
        json!({"name": "add_note", "arguments": {"title": "t", "body": "b", "tags": ["x"]}}),
    ));
    let saved = s.recv()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = saved.strip_prefix("saved note ").expect(&saved).to_owned();
    assert!(id.starts_with("h_") && id.len() == 24, "{id}");
    s.send(&request(
        json!(2),
        "tools/call",
        json!({"name": "list_notes", "arguments": {"tag": "x"}}),
    ));
    assert_eq!(
        s.recv()["result"]["structuredContent"],
        json!([{"id": id, "title": "t", "tags": ["x"]}])
    );
    s.send(&request(
        json!(3),
        "tools/call",
        json!({"name": "get_note", "arguments": {"id": id}}),
    ));
    assert_eq!(s.recv()["result"]["structuredContent"]["body"], "b");

    let (_child, addr) = spawn_http_example("notes", &["--http", "127.0.0.1:0"]);
    let r = post(
        addr,
        &request(
            json!(1),
            "tools/call",
            json!({"name": "get_note", "arguments": {"id": "h_AAAAAAAAAAAAAAAAAAAAAA"}}),
        ),
    );
    assert_eq!(r.json()["result"]["isError"], true);
    let text = r.json()["result"]["content"][0]["text"].clone();
    assert!(
        text.as_str().unwrap().contains("unknown or expired handle"),
        "{text}"
    );
}

#[test]
fn resources_prompts_and_completion_over_stdio() {
    let mut s = Stdio_::conformance();
    s.send(&request(
        json!(1),
        "resources/read",
        json!({"uri": "test://template/42/data"}),
    ));
    let v = s.recv();
    let text: Value =
        serde_json::from_str(v["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["id"], "42");
    assert_eq!(v["result"]["cacheScope"], "private");
    s.send(&request(
        json!(2),
        "resources/read",
        json!({"uri": "test://nope"}),
    ));
    let v = s.recv();
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(v["error"]["data"]["uri"], "test://nope");
    s.send(&request(
        json!(3),
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    ));
    assert_eq!(
        s.recv()["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    s.send(&request(json!(4), "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "test"}})));
    assert_eq!(
        s.recv()["result"]["completion"]["values"],
        json!(["test", "testValue1", "testing"])
    );
    s.send(&request(json!(5), "resources/templates/list", json!({})));
    assert_eq!(
        s.recv()["result"]["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
}

/// stdin that is not a pipe (a file, as in `server < requests.jsonl`; a socket) is served
/// the same way, with the same answers.
#[test]
fn stdin_from_a_file_or_a_socket_is_served_too() {
    let requests = format!(
        "{}\n{}\n",
        request(json!(1), "tools/list", json!({})),
        call(json!(2), "test_simple_text")
    );
    let check = |stdout: &[u8]| {
        let lines: Vec<Value> = String::from_utf8_lossy(stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        let mut ids: Vec<i64> = lines.iter().filter_map(|l| l["id"].as_i64()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [1, 2]);
        assert!(lines.iter().all(|l| l.get("result").is_some()), "{lines:?}");
    };

    let path = std::env::temp_dir().join(format!("mcp-stdin-{}.jsonl", std::process::id()));
    std::fs::write(&path, &requests).unwrap();
    let out = Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(std::fs::File::open(&path).unwrap())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    check(&out.stdout);
    let _ = std::fs::remove_file(&path);

    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let child = Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(std::os::fd::OwnedFd::from(theirs))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut ours = ours;
    ours.write_all(requests.as_bytes()).unwrap();
    ours.shutdown(std::net::Shutdown::Write).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    check(&out.stdout);
}

/// Sleeps for `ms` milliseconds: a plain `fn`, so on the blocking pool, where nothing can
/// stop it.
#[mcp_runtime::tool]
fn slumber(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    "awake".into()
}

/// The same as a task (the tasks extension): its worker runs on a task of its own.
#[mcp_runtime::tool(task = "required")]
fn task_slumber(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    "awake".into()
}

/// The child of `a_blocking_handler_does_not_keep_the_process_after_eof`: this test
/// binary, run again for this test alone, serving `slumber` and `task_slumber` on stdio
/// (libtest writes its "running 1 test" line to stdout first).
#[test]
fn blocking_handler_child() {
    if std::env::var_os("MCP_BLOCKING_CHILD").is_none() {
        return;
    }
    let server = mcp_runtime::Server::builder("blocking", "1.0")
        .tools(mcp_runtime::tools![slumber, task_slumber])
        .tasks(mcp_runtime::config::Tasks::default())
        .build()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(server.serve_stdio()).unwrap();
}

/// This test binary run again for test `name` alone, with `env` set (which that test
/// waits for before it does anything), its stdout piped.
fn child_test(name: &str, env: &str, stdin: Stdio) -> std::process::Child {
    child_test_with(name, (env, "1"), stdin)
}

/// [`child_test`] with the variable's value given.
fn child_test_with(name: &str, (env, value): (&str, &str), stdin: Stdio) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture"])
        .env(env, value)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The child of the next test: blocking work of the application's own (no request
/// started it) runs while `serve_stdio` serves; once `serve_stdio` returns, the child
/// says so on stdout and exits itself.
#[test]
fn application_blocking_child() {
    if std::env::var_os("MCP_APP_BLOCKING_CHILD").is_none() {
        return;
    }
    let server = mcp_runtime::Server::builder("blocking", "1.0")
        .tools(mcp_runtime::tools![slumber])
        .build()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        tokio::spawn(mcp_runtime::blocking(|| {
            std::thread::sleep(Duration::from_secs(60))
        }));
        tokio::time::sleep(Duration::from_millis(50)).await;
        server.serve_stdio().await.unwrap();
    });
    println!("serve_stdio returned");
    std::io::stdout().flush().unwrap();
    std::process::exit(0);
}

/// Blocking work that no request of the stdio server started does not make it end the
/// process: `serve_stdio` returns, so what the application does after it (flushing,
/// cleaning up, other servers) still runs.
#[test]
fn blocking_work_of_the_application_does_not_end_the_process() {
    let mut child = child_test(
        "application_blocking_child",
        "MCP_APP_BLOCKING_CHILD",
        Stdio::null(),
    );
    let stdout = child.stdout.take().unwrap();
    let mut child = ChildGuard(child);
    let status = exit_within(&mut child, Duration::from_secs(15), "stdin closed");
    let said: Vec<String> = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .collect();
    assert!(status.success(), "{status}");
    assert!(
        said.iter().any(|l| l == "serve_stdio returned"),
        "serve_stdio did not return: {said:?}"
    );
}

/// A handler's blocking section still running when stdin closes does not keep the
/// process: after the drain (5 s) it exits 0, where the runtime, dropped, would wait out
/// the section (a minute here). So for a task's handler, whose request was answered at
/// once (with the task) and whose worker runs on a task of its own.
#[test]
fn a_blocking_handler_does_not_keep_the_process_after_eof() {
    for tool in ["slumber", "task_slumber"] {
        blocking_handler_at_eof(tool);
    }
}

fn blocking_handler_at_eof(tool: &str) {
    let mut child = child_test(
        "blocking_handler_child",
        "MCP_BLOCKING_CHILD",
        Stdio::piped(),
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut child = ChildGuard(child);
    let mut ask = |id: u64, ms: u64| {
        let body = request(
            json!(id),
            "tools/call",
            json!({"name": "slumber", "arguments": {"ms": ms}}),
        );
        writeln!(stdin, "{body}").unwrap();
        stdin.flush().unwrap();
    };
    // A short one first: served (so the server is up), and past libtest's own lines.
    ask(1, 1);
    let answer = loop {
        let line = lines.next().expect("a line").unwrap();
        if line.starts_with('{') {
            break serde_json::from_str::<Value>(&line).unwrap();
        }
    };
    assert_eq!(answer["result"]["content"][0]["text"], "awake", "{answer}");
    if tool == "slumber" {
        ask(2, 60_000);
    } else {
        let mut body = request(
            json!(2),
            "tools/call",
            json!({"name": tool, "arguments": {"ms": 60_000}}),
        );
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        writeln!(stdin, "{body}").unwrap();
        stdin.flush().unwrap();
        let handle: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    }
    std::thread::sleep(Duration::from_millis(300));
    drop(stdin);
    let closed = Instant::now();
    let status = exit_within(&mut child, Duration::from_secs(15), "stdin closed");
    assert!(status.success(), "{tool}: {status}");
    if tool == "slumber" {
        assert!(
            closed.elapsed() >= Duration::from_secs(4),
            "it did not drain"
        );
    }
}

/// Reports progress 0, then answers 5 s later.
#[mcp_runtime::tool]
async fn progress_then_wait(progress: mcp_runtime::Progress) -> &'static str {
    progress.report(0.0, None, None);
    tokio::time::sleep(Duration::from_secs(5)).await;
    "done"
}

/// The child of the next test: an application that stops awaiting `serve_stdio` (a
/// `select!` with a timer) before anything was queued, and goes on running.
#[test]
fn dropped_serve_child() {
    if std::env::var_os("MCP_DROPPED_SERVE_CHILD").is_none() {
        return;
    }
    let server = mcp_runtime::Server::builder("dropped", "1.0")
        .tools(mcp_runtime::tools![progress_then_wait])
        .build()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        tokio::select! {
            _ = server.serve_stdio() => {}
            () = tokio::time::sleep(Duration::from_millis(300)) => {}
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
}

/// Dropping the `serve_stdio` future before its forwarder started starts the forwarder:
/// a queued notification still reaches stdout at once, not only with the next answer
/// (5 s later here), as it did when the forwarder was always a task.
#[test]
fn dropping_serve_stdio_early_still_forwards_what_is_queued() {
    let mut child = ChildGuard(child_test(
        "dropped_serve_child",
        "MCP_DROPPED_SERVE_CHILD",
        Stdio::piped(),
    ));
    let mut stdin = child.0.stdin.take().unwrap();
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        // libtest's own lines are not JSON.
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    // By now the child has dropped its `serve_stdio` future.
    std::thread::sleep(Duration::from_millis(1000));
    let mut req = call(json!(1), "progress_then_wait");
    req["params"]["_meta"]["progressToken"] = json!("p");
    writeln!(stdin, "{req}").unwrap();
    let first = rx
        .recv_timeout(Duration::from_secs(3))
        .expect("the progress notification, before the answer");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    let answer = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the answer");
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
}

/// Echoes `text` at once (answered by the reading thread).
#[mcp_runtime::tool]
async fn shout(text: String) -> String {
    text
}

/// Echoes `text` after yielding once (answered by the request's task, on the runtime).
#[mcp_runtime::tool]
async fn shout_later(text: String) -> String {
    tokio::task::yield_now().await;
    text
}

/// The child of the next test: `shout` and `shout_later` on stdio, on a current-thread
/// runtime when `MCP_STUCK_CHILD` is `current_thread`, a multi-thread one otherwise.
#[test]
fn stuck_stdout_child() {
    let Some(flavor) = std::env::var_os("MCP_STUCK_CHILD") else {
        return;
    };
    let server = mcp_runtime::Server::builder("stuck", "1.0")
        .tools(mcp_runtime::tools![shout, shout_later])
        .build()
        .unwrap();
    let rt = match flavor.to_str() {
        Some("current_thread") => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
    .unwrap();
    rt.block_on(server.serve_stdio()).unwrap();
    std::process::exit(0);
}

/// A client that stops reading stdout (the pipe fills, and a write of the server's waits
/// for good) cannot keep the server from stopping: SIGTERM still ends it, after the drain
/// at most, whichever thread is blocked in the write and on either runtime.
#[test]
fn a_client_that_stops_reading_cannot_keep_the_server_from_a_signal() {
    for flavor in ["current_thread", "multi_thread"] {
        for tool in ["shout", "shout_later"] {
            signal_with_stdout_full(flavor, tool);
        }
    }
}

fn signal_with_stdout_full(flavor: &str, tool: &str) {
    let env = ("MCP_STUCK_CHILD", flavor);
    let mut child = child_test_with("stuck_stdout_child", env, Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    // Read nothing, but keep the pipe open: the server's writes fill it and then wait.
    let _stdout = child.stdout.take().unwrap();
    let mut child = ChildGuard(child);
    let pid = child.0.id().to_string();
    // Requests until the server stops reading them (its stdin fills too), with 20 KB
    // answers. A thread writes them, since that write ends blocked.
    let text = "x".repeat(20_000);
    let name = tool.to_owned();
    let (sent_tx, sent) = mpsc::channel::<u64>();
    std::thread::spawn(move || {
        for id in 1u64.. {
            let body = request(
                json!(id),
                "tools/call",
                json!({"name": name, "arguments": {"text": text}}),
            );
            if writeln!(stdin, "{body}").is_err() {
                break;
            }
            let _ = sent_tx.send(id);
        }
    });
    // Sending stalls when both pipes are full.
    let mut last = 0;
    while let Ok(id) = sent.recv_timeout(Duration::from_millis(500)) {
        last = id;
    }
    // More than stdin's pipe holds: the server read some, so its answers filled stdout's.
    assert!(
        last * 20_000 > 2 * 65_536,
        "{flavor} {tool}: only {last} requests went out"
    );
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let status = exit_within(
        &mut child,
        Duration::from_secs(9),
        &format!("SIGTERM with stdout full ({flavor}, {tool})"),
    );
    assert!(status.success(), "{flavor} {tool}: {status}");
}

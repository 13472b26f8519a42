//! stdio upstreams that exit, stay silent or answer under odd ids, with a real child: a
//! hand-written 2025-11-25 server (`tests/clients/stdio_stub.py`, Python's standard
//! library only) that crashes, hangs or misnames its answers when a tool says so.
//!
//! Needs `python3` (or `MCP_PYTHON`): skipped without it, unless
//! `MCP_REAL_CLIENTS=required` (set by `.ci/run`).

mod common;

use mcp_runtime::Server;
use mcp_runtime::proxy::{StdioOptions, Upstream, UpstreamError};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Python's own executable (not a launcher such as pyenv's shim, which a link under
/// another name would not run), or `None` (skipped).
fn python() -> Option<PathBuf> {
    let python = std::env::var_os("MCP_PYTHON").map_or_else(|| "python3".into(), PathBuf::from);
    let own = std::process::Command::new(&python)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()))
        .filter(|p| p.is_absolute());
    if own.is_some() {
        return own;
    }
    assert!(
        std::env::var("MCP_REAL_CLIENTS").as_deref() != Ok("required"),
        "MCP_REAL_CLIENTS=required but {} does not run",
        python.display()
    );
    eprintln!("skipped: no {}", python.display());
    None
}

/// One stub server's command line and state directory (removed when dropped).
struct Stub {
    python: PathBuf,
    dir: PathBuf,
}

impl Stub {
    fn new(name: &str) -> Option<Stub> {
        let python = python()?;
        let dir =
            std::env::temp_dir().join(format!("mcp-stdio-stub-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Started through a link named for the test, the program its logs name is its
        // own: the logs of other tests in this binary cannot pass its checks.
        #[cfg(unix)]
        let python = {
            let own = dir.join(format!("python-{name}"));
            std::os::unix::fs::symlink(&python, &own).unwrap();
            own
        };
        Some(Stub { python, dir })
    }

    /// The arguments to Python.
    fn args(&self) -> Vec<OsString> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/stdio_stub.py");
        vec![script.into(), self.dir.clone().into()]
    }

    /// A maker of its command, for `Upstream::command_with`.
    fn command(&self) -> impl Fn() -> tokio::process::Command + Send + Sync + 'static {
        let (python, args) = (self.python.clone(), self.args());
        move || {
            let mut cmd = tokio::process::Command::new(&python);
            cmd.args(&args);
            cmd
        }
    }

    /// How many times it was started.
    fn starts(&self) -> usize {
        self.pids().len()
    }

    /// The process id of each start, in order.
    fn pids(&self) -> Vec<u32> {
        let starts = std::fs::read_to_string(self.dir.join("starts")).unwrap_or_default();
        let pid = |l: &str| l.strip_prefix("start ").and_then(|p| p.parse().ok());
        starts.lines().map(|l| pid(l).unwrap_or(0)).collect()
    }

    /// While `on`, it exits as soon as it starts.
    fn crash_on_start(&self, on: bool) {
        let flag = self.dir.join("crash-on-start");
        if on {
            std::fs::write(flag, b"").unwrap();
        } else {
            std::fs::remove_file(flag).unwrap();
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `fut`, which must end within 20 s (not a time it is held to: a stop for a test that
/// would otherwise wait for the 60 s time limit).
async fn soon<T>(fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .expect("done within 20 s")
}

/// The time limit given to requests in the tests of `StdioOptions::timeout`: it is also
/// the limit of each request of the handshake with a fresh Python, which a busy machine
/// may take seconds to start.
const LIMIT: Duration = Duration::from_secs(5);

/// Calls the stub's tool `name`; the text of its result.
async fn call(up: &Upstream, name: &str) -> Result<String, UpstreamError> {
    let r = up
        .request("tools/call", json!({"name": name, "arguments": {}}))
        .await?;
    Ok(r["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// The names of the stub's tools, as it lists them now.
async fn tools(up: &Upstream) -> Vec<String> {
    let listed = up.request("tools/list", json!({})).await.unwrap();
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

fn is_unavailable(r: &Result<String, UpstreamError>, saying: &str) -> bool {
    matches!(r, Err(UpstreamError::Unavailable(why)) if why.contains(saying))
}

/// Waits (up to 5 s) until the logs say `what`.
async fn logged(what: &str) {
    logged_by(None, what).await;
}

/// Waits (up to 5 s) until a line of the runtime's logs says `what`, naming the program
/// of `by` when given (its own: see [`Stub::new`]).
async fn logged_by(by: Option<&Stub>, what: &str) {
    let program = by.map(|s| format!("program={}", s.python.display()));
    for _ in 0..250 {
        let logs = common::logs();
        let mut lines = logs.lines();
        if lines.any(|l| l.contains(what) && program.as_ref().is_none_or(|p| l.contains(p))) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("not logged: {what}\n{}", common::logs());
}

/// A child that exits fails the request in flight at once, and a warning says how it
/// exited. Before, the warning said only that its stdout closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_exits_fails_the_request_in_flight_and_its_exit_status_is_told() {
    common::capture_logs();
    let Some(stub) = Stub::new("exits") else {
        return;
    };
    let up = Upstream::stdio(&stub.python, stub.args()).await.unwrap();
    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exited"), "{crashed:?}");
    logged_by(Some(&stub), "the upstream server exited (exit status: 3)").await;
}

/// A child that exited is started again by the next request (its handshake done again:
/// its lists are the new run's). Before, every later request failed for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exited_child_is_started_again_on_the_next_request() {
    common::capture_logs();
    let Some(stub) = Stub::new("again") else {
        return;
    };
    let up = Upstream::stdio(&stub.python, stub.args()).await.unwrap();
    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
    assert!(tools(&up).await.contains(&"gen1".to_owned()));

    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exited"), "{crashed:?}");

    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
    assert_eq!(stub.starts(), 2);
    assert_eq!(up.protocol_version(), "2025-11-25");
    let listed = tools(&up).await;
    assert!(listed.contains(&"gen2".to_owned()), "{listed:?}");
    logged_by(Some(&stub), "the upstream server was started again").await;
}

/// `Upstream::command` cannot make its command again: a child that exited stays gone.
/// `Upstream::command_with` makes it anew for each start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_is_not_started_again_and_a_command_maker_is() {
    let Some(stub) = Stub::new("command") else {
        return;
    };
    let up = Upstream::command(stub.command()()).await.unwrap();
    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exited"), "{crashed:?}");
    let after = soon(call(&up, "echo")).await;
    assert!(is_unavailable(&after, "exited"), "{after:?}");
    assert_eq!(stub.starts(), 1);

    let Some(stub) = Stub::new("command-with") else {
        return;
    };
    let up = Upstream::command_with(stub.command(), StdioOptions::new())
        .await
        .unwrap();
    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exited"), "{crashed:?}");
    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
    assert_eq!(stub.starts(), 2);
}

/// A child that exits as soon as it starts: the start that failed says why, the requests
/// that follow are refused, saying so, until its wait has passed, and once the child
/// stays up again, requests reach it. (The waits themselves are checked with a paused
/// clock in the unit tests of `proxy::link`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_exits_at_once_is_started_again_after_a_wait() {
    let Some(stub) = Stub::new("at-once") else {
        return;
    };
    let up = Upstream::stdio(&stub.python, stub.args()).await.unwrap();
    stub.crash_on_start(true);
    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exited"), "{crashed:?}");
    let failed = soon(call(&up, "echo")).await;
    assert!(is_unavailable(&failed, "handshake failed"), "{failed:?}");
    assert_eq!(stub.starts(), 2);
    stub.crash_on_start(false);
    // Refused while it waits (1 s), then started again: each try fails clearly or works.
    let answer = soon(async {
        loop {
            match call(&up, "echo").await {
                Ok(text) => return text,
                Err(UpstreamError::Unavailable(why)) if why.contains("at the earliest") => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("{e:?}"),
            }
        }
    })
    .await;
    assert_eq!(answer, "{}");
    assert_eq!(stub.starts(), 3);
}

/// A gateway that follows a stdio upstream serves what the child started again lists:
/// its lists are read again after the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_following_gateway_serves_what_the_child_started_again_lists() {
    let Some(stub) = Stub::new("follow") else {
        return;
    };
    let up = Upstream::stdio(&stub.python, stub.args()).await.unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("stub", up.items().await.unwrap())
        .build()
        .unwrap();
    let _following = up.follow(&gateway, "stub");
    assert!(gateway.tool_names().contains(&"stub_gen1".to_owned()));
    let client = mcp_runtime::testing::TestClient::new(gateway.clone());
    let crashed = soon(client.call_tool("stub_crash", json!({})))
        .await
        .unwrap();
    assert!(
        crashed.is_error() && crashed.text().contains("exited"),
        "{:?}",
        crashed.result
    );
    let echoed = soon(client.call_tool("stub_echo", json!({"a": 1}))).await;
    assert_eq!(echoed.unwrap().text(), r#"{"a": 1}"#);
    let names = soon(async {
        loop {
            let names = gateway.tool_names();
            if names.contains(&"stub_gen2".to_owned()) {
                return names;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(!names.contains(&"stub_gen1".to_owned()), "{names:?}");
}

/// `StdioOptions::timeout`: a request the child stays silent on is given up at that
/// limit, a plain request and a forwarded call alike, and the child is told
/// (`notifications/cancelled`) about each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_child_is_silent_on_is_given_up_at_its_time_limit() {
    let Some(stub) = Stub::new("timeout") else {
        return;
    };
    let options = StdioOptions::new().timeout(LIMIT);
    let up = Upstream::stdio_with(&stub.python, stub.args(), options)
        .await
        .unwrap();
    let hung = soon(call(&up, "hang")).await;
    assert_eq!(hung, Err(UpstreamError::Timeout));

    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("stub", up.items().await.unwrap())
        .build()
        .unwrap();
    let client = mcp_runtime::testing::TestClient::new(gateway);
    let hung = soon(client.call_tool("stub_hang", json!({})))
        .await
        .unwrap();
    assert!(
        hung.is_error() && hung.text().contains("time limit"),
        "{:?}",
        hung.result
    );
    // The call's cancel is sent as its task sees it given up: asked until it came.
    let told = soon(async {
        loop {
            let told: Value = serde_json::from_str(&call(&up, "cancelled").await.unwrap()).unwrap();
            if told.as_array().map_or(0, Vec::len) >= 2 {
                return told;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(told.as_array().map(Vec::len), Some(2), "{told}");
    assert!(told.as_array().unwrap().iter().all(Value::is_u64), "{told}");
}

/// An answer with its request's id written as a string (`"7"` for 7) is taken. Before,
/// it was dropped and the request waited for its time limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_under_its_id_as_a_string_is_taken() {
    let Some(stub) = Stub::new("string-id") else {
        return;
    };
    let up = Upstream::stdio(&stub.python, stub.args()).await.unwrap();
    assert_eq!(soon(call(&up, "string_id")).await.unwrap(), "as a string");
}

/// An answer under an id no request has is told at warn, naming the id, and dropped; its
/// request ends at its time limit and is cancelled upstream. Before, it was dropped
/// silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_under_an_id_no_request_has_is_told() {
    common::capture_logs();
    let Some(stub) = Stub::new("wrong-id") else {
        return;
    };
    let options = StdioOptions::new().timeout(LIMIT);
    let up = Upstream::stdio_with(&stub.python, stub.args(), options)
        .await
        .unwrap();
    let r = soon(call(&up, "wrong_id")).await;
    assert_eq!(r, Err(UpstreamError::Timeout));
    let told: Value = serde_json::from_str(&call(&up, "cancelled").await.unwrap()).unwrap();
    let id = told[0].as_u64().expect("the call was cancelled upstream");
    logged(&format!(
        "answered id {}, which no request waits for",
        id + 1000
    ))
    .await;
}

/// A child that exits while a process it started holds its stdout open (`sh -c 'sleep 5
/// & exec ...'`): the request in flight fails at once, naming its exit status, and the
/// next request starts it again. Before, the request waited until the helper let go of
/// the pipe (the link waited for the end of its stdout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_exits_with_its_stdout_held_open_fails_its_requests_at_once() {
    let Some(stub) = Stub::new("held") else {
        return;
    };
    let mut args: Vec<OsString> = vec![
        "-c".into(),
        r#"sleep 5 & exec "$0" "$@""#.into(),
        stub.python.clone().into(),
    ];
    args.extend(stub.args());
    let up = Upstream::stdio("sh", args).await.unwrap();
    let began = std::time::Instant::now();
    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exit status: 3"), "{crashed:?}");
    // At once: not when the helper lets go of the pipe, 5 s on.
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
    assert_eq!(stub.starts(), 2);
}

/// A legacy upstream's task whose `tasks/get` says it ended while its `tasks/result`
/// never answers: the call ends at the upstream's own time limit (`StdioOptions::timeout`),
/// saying the result did not come. Before, it waited a fixed 60 s whatever the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_task_whose_result_never_comes_ends_at_the_upstreams_limit() {
    let Some(stub) = Stub::new("stuck-task") else {
        return;
    };
    let options = StdioOptions::new().timeout(LIMIT);
    let up = Upstream::stdio_with(&stub.python, stub.args(), options)
        .await
        .unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("stub", up.items().await.unwrap())
        .build()
        .unwrap();
    let client = mcp_runtime::testing::TestClient::new(gateway);
    let began = std::time::Instant::now();
    let stuck =
        tokio::time::timeout(LIMIT * 3, client.call_tool("stub_stuck_task", json!({}))).await;
    let stuck = stuck
        .unwrap_or_else(|_| panic!("still waiting after {:?}", LIMIT * 3))
        .unwrap();
    assert!(
        stuck.is_error() && stuck.text().contains("its result did not come"),
        "{:?}",
        stuck.result
    );
    assert!(began.elapsed() >= LIMIT, "{:?}", began.elapsed());
}

/// A child that stops reading its stdin while it stays up (its stdin kept open) is taken
/// for gone once a write to it makes no progress for `StdioOptions::write_stall_timeout`:
/// the request whose write stalled (larger than the pipe's buffer) and the one queued
/// behind it fail at once, saying so, one warning names the program, the child is
/// killed, and the next request starts it again. Before, each request waited for its time
/// limit, the later ones queued behind the stalled write, and the child was never started
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_stops_reading_its_stdin_is_taken_for_gone() {
    common::capture_logs();
    let Some(stub) = Stub::new("deaf") else {
        return;
    };
    let limit = LIMIT * 2;
    let options = StdioOptions::new()
        .timeout(limit)
        .write_stall_timeout(Duration::from_secs(1));
    let up = Upstream::stdio_with(&stub.python, stub.args(), options)
        .await
        .unwrap();
    assert_eq!(soon(call(&up, "deaf")).await.unwrap(), "deaf from now on");
    let big = json!({"name": "echo", "arguments": {"pad": "x".repeat(1 << 20)}});
    let began = std::time::Instant::now();
    let behind = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        call(&up, "echo").await
    };
    let (stalled, behind) =
        soon(async { tokio::join!(up.request("tools/call", big), behind) }).await;
    assert!(
        began.elapsed() < limit / 2,
        "at the stall, not at the time limit: {:?}",
        began.elapsed()
    );
    assert!(
        matches!(&stalled, Err(UpstreamError::Unavailable(why)) if why.contains("stopped reading its stdin")),
        "{stalled:?}"
    );
    assert!(
        is_unavailable(&behind, "stopped reading its stdin"),
        "{behind:?}"
    );
    logged_by(Some(&stub), "stopped reading its stdin").await;
    // Killed: its process is gone (and reaped) at once, not when the gateway goes.
    let first = std::path::PathBuf::from(format!("/proc/{}", stub.pids()[0]));
    soon(async {
        while first.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;

    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
    assert_eq!(stub.starts(), 2);
    let program = format!("program={}", stub.python.display());
    let logs = common::logs();
    let warned: Vec<_> = logs
        .lines()
        .filter(|l| l.contains("WARN") && l.contains(&program))
        .collect();
    assert_eq!(warned.len(), 1, "{warned:#?}");
}

/// A zero time limit or write stall limit is refused when connecting, before the child is
/// started, saying which: zero would give up every request at once, or kill the child on
/// any write to its stdin that has to wait (the stall limit is the time limit unless
/// set). Before, both were taken: a zero stall limit connected, and killed a healthy
/// child the first time its pipe was full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_limit_is_refused() {
    let Some(stub) = Stub::new("zero") else {
        return;
    };
    let zero = Duration::ZERO;
    for (options, named) in [
        (
            StdioOptions::new().write_stall_timeout(zero),
            "write_stall_timeout",
        ),
        (StdioOptions::new().timeout(zero), "StdioOptions::timeout"),
        (
            StdioOptions::new().timeout(zero).write_stall_timeout(LIMIT),
            "StdioOptions::timeout",
        ),
        (
            StdioOptions::new().timeout(LIMIT).write_stall_timeout(zero),
            "write_stall_timeout",
        ),
    ] {
        let r = Upstream::stdio_with(&stub.python, stub.args(), options).await;
        assert!(
            matches!(&r, Err(UpstreamError::Unavailable(why)) if why.contains(named) && why.contains("zero")),
            "{named}: {r:?}"
        );
    }
    assert_eq!(stub.starts(), 0, "refused before it is started");
}

/// A child whose stdout ends while it stays up (reading nothing) is gone, killed at the
/// end of its grace, before the next request starts another: never two runs at once.
/// Before, the new one started at once, while the old one ran on for up to 500 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_is_gone_before_the_next_one_starts() {
    let Some(stub) = Stub::new("mute") else {
        return;
    };
    let up = Upstream::stdio(&stub.python, stub.args()).await.unwrap();
    let muted = soon(call(&up, "mute")).await;
    assert!(is_unavailable(&muted, "closed its stdout"), "{muted:?}");
    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
    assert_eq!(stub.starts(), 2);
    let overlaps = std::fs::read_to_string(stub.dir.join("overlaps")).unwrap_or_default();
    assert_eq!(
        overlaps, "",
        "earlier starts still running as the next started"
    );
}

#[cfg(target_os = "linux")]
#[path = "proxy_stdio/groups.rs"]
mod groups;

/// A gateway over HTTP mounting `up` as `leaky`, and how to call one of its tools (the
/// answer's JSON, from a blocking task).
async fn leaky_gateway(
    up: Upstream,
) -> impl Fn(u64, &'static str) -> tokio::task::JoinHandle<Value> {
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("leaky", up.items().await.unwrap())
        .build()
        .unwrap();
    let addr = common::serve_in_background(gateway.http());
    move |id: u64, name: &'static str| {
        let body = common::request(
            json!(id),
            "tools/call",
            json!({"name": name, "arguments": {}}),
        );
        tokio::task::spawn_blocking(move || common::post(addr, &body).json())
    }
}

/// A stdio child's stderr (inherited: the operator's terminal or log) and its bad output
/// never reach a gateway's client: a line that is not JSON is told to the log; a result of
/// the wrong shape, an `error` that is not a JSON-RPC error object and an exit are errors
/// saying what went wrong, not what the child said (`tests/proxy_stdio/leaky_stub.py`
/// quotes a secret in all of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_stderr_and_bad_output_never_reach_a_gateways_client() {
    common::capture_logs();
    const SECRET: &str = "vault-3.internal:8200 marker-5be0";
    let Some(python) = python() else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/proxy_stdio/leaky_stub.py");
    let options = StdioOptions::new().timeout(LIMIT);
    let up = Upstream::stdio_with(&python, [script.into_os_string(), SECRET.into()], options)
        .await
        .unwrap();
    let call = leaky_gateway(up).await;
    let mut read = Vec::new();
    for (id, name) in [
        (1, "leaky_bad_line"),
        (2, "leaky_bad_shape"),
        (3, "leaky_bad_error"),
        (4, "leaky_crash"),
    ] {
        let r: Value = soon(call(id, name)).await.unwrap();
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        eprintln!("{name}, the client read: {text}");
        assert!(!r.to_string().contains("marker-5be0"), "{r}");
        read.push(text.to_owned());
    }
    assert_eq!(
        read[..3],
        [
            "ok",
            "the upstream server's answer was not valid: invalid type: string, expected a sequence",
            "the upstream server is unavailable: it answered an error that is not a JSON-RPC error object",
        ]
    );
    // Its exit status, or that its stdout closed, whichever is seen first.
    assert!(
        read[3].starts_with("the upstream server is unavailable: the upstream server exited ("),
        "{read:?}"
    );
    // What it said is in the log.
    logged("Traceback: cannot reach vault-3.internal:8200 marker-5be0").await;
    logged("not valid (invalid type: string \"see vault-3.internal:8200 marker-5be0\"").await;
    logged("failed at vault-3.internal:8200 marker-5be0").await;
}

/// A child started again after a crash whose `initialize` answers a JSON-RPC error: the
/// client reads that its handshake failed (it answered an error), never the error's
/// message, neither from the start that failed nor, while the start waits, from the
/// refusals that say why it is down; the message is in the log, naming the mount.
/// Before, both quoted it ("started again, its handshake failed: error -32603: cannot
/// open /srv/secret.db on ...").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_started_again_whose_handshake_fails_never_tells_the_client_why() {
    common::capture_logs();
    const SECRET: &str = "vault-3.internal:8200 marker-91ad";
    let Some(python) = python() else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/proxy_stdio/leaky_stub.py");
    let starts = std::env::temp_dir().join(format!("mcp-leaky-starts-{}", std::process::id()));
    let _ = std::fs::remove_file(&starts);
    let options = StdioOptions::new().timeout(LIMIT);
    let args = [
        script.into_os_string(),
        SECRET.into(),
        starts.clone().into(),
    ];
    let up = Upstream::stdio_with(&python, args, options).await.unwrap();
    let call = leaky_gateway(up).await;
    let mut read = Vec::new();
    for (id, name) in [
        (1, "leaky_crash"),
        (2, "leaky_bad_line"),
        (3, "leaky_bad_line"),
    ] {
        let r: Value = soon(call(id, name)).await.unwrap();
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        eprintln!("{name}, the client read: {text}");
        assert!(!r.to_string().contains("marker-91ad"), "{r}");
        read.push(text);
    }
    let _ = std::fs::remove_file(&starts);
    assert_eq!(
        read[1],
        "the upstream server is unavailable: started again, its handshake failed (it answered an error)"
    );
    assert!(
        read[2].starts_with(
            "the upstream server is unavailable: the upstream server is down (started again, its handshake failed (it answered an error)), and is started again in "
        ),
        "{read:?}"
    );
    // What it said is in the log, naming its mount.
    for _ in 0..250 {
        let logs = common::logs();
        let mut lines = logs.lines();
        if let Some(line) = lines.find(|l| l.contains(SECRET) && l.contains("mount=leaky")) {
            eprintln!("the log: {line}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("not logged with its mount: {SECRET}\n{}", common::logs());
}

/// A child that cannot be started again (its program is gone) is refused with the kind
/// of the error alone; the error's text is in the log. Before, the client read the
/// error's text (`cannot start it: No such file or directory (os error 2)`).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_cannot_be_started_again_says_only_why() {
    common::capture_logs();
    let Some(stub) = Stub::new("vanished") else {
        return;
    };
    let up = Upstream::stdio(&stub.python, stub.args()).await.unwrap();
    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exited"), "{crashed:?}");
    std::fs::remove_file(&stub.python).unwrap();
    let failed = soon(call(&up, "echo")).await;
    eprintln!("the request got: {failed:?}");
    assert_eq!(
        failed,
        Err(UpstreamError::Unavailable(
            "starting it again: cannot start it (entity not found)".into()
        ))
    );
    logged_by(
        Some(&stub),
        "the upstream server cannot be started: No such file",
    )
    .await;
}

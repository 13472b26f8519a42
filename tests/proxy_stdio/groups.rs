//! What a stdio child started goes with it: a server run by a wrapper that does not exec
//! it (`sh -c '...; exit $?'`, as `npx` runs one), or a helper holding its stdout, is
//! killed with the child's process group when the child is killed (it stopped reading
//! its stdin, or the upstream or the runtime was dropped) or exits. Linux only (it reads
//! `/proc`).

use super::{LIMIT, Stub, call, is_unavailable, soon};
use mcp_runtime::proxy::{StdioOptions, Upstream, UpstreamError};
use serde_json::json;
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// The arguments to `sh` that run the stub as its child, not in its place: the stub's
/// pid (`Stub::pids`) is the wrapper's child's.
fn wrapped(stub: &Stub) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "-c".into(),
        r#""$0" "$@"; exit $?"#.into(),
        stub.python.clone().into(),
    ];
    args.extend(stub.args());
    args
}

/// Whether `pid` runs (a zombie does not: what would reap it may be no init at all in a
/// container) with `marker` in its command line (another process given its pid later
/// does not).
fn runs(pid: u32, marker: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let ours = String::from_utf8_lossy(&cmdline).contains(marker);
    // Its state follows its name, in parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    ours && !matches!(state, Some("Z" | "X") | None)
}

/// Waits (up to 5 s) until `pid` (`marker` in its command line) no longer runs; if it
/// still does then, it is killed (a failed test leaves nothing behind) and the test
/// fails.
async fn gone(pid: u32, marker: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while runs(pid, marker) {
        if Instant::now() > deadline {
            let pid = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw);
            if let Some(pid) = pid {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            panic!("{what} still runs 5 s after the child was killed or exited");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The stub's first start: its pid, and what marks its command line (its directory).
fn first(stub: &Stub) -> (u32, String) {
    let pid = stub.pids().first().copied().unwrap_or(0);
    (pid, stub.dir.display().to_string())
}

/// A wrapper whose server stops reading its stdin is killed for it, and the server with
/// it. Before, only the wrapper was: the server ran on, deaf, for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_a_wrapper_runs_is_killed_with_it_when_it_stops_reading() {
    let Some(stub) = Stub::new("group-stall") else {
        return;
    };
    let options = StdioOptions::new()
        .timeout(LIMIT * 2)
        .write_stall_timeout(Duration::from_secs(1));
    let up = Upstream::stdio_with("sh", wrapped(&stub), options)
        .await
        .unwrap();
    assert_eq!(soon(call(&up, "deaf")).await.unwrap(), "deaf from now on");
    let big = json!({"name": "echo", "arguments": {"pad": "x".repeat(1 << 20)}});
    let stalled = soon(up.request("tools/call", big)).await;
    assert!(
        matches!(&stalled, Err(UpstreamError::Unavailable(why)) if why.contains("stopped reading its stdin")),
        "{stalled:?}"
    );
    let (pid, marker) = first(&stub);
    gone(pid, &marker, "the server the wrapper ran").await;
    // Started again, through a wrapper again.
    assert_eq!(soon(call(&up, "echo")).await.unwrap(), "{}");
}

/// A child that exits while a helper it started holds its stdout open: the helper goes
/// too. Before, it ran on (here for 60 s), one more with each start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helper_the_child_started_goes_when_the_child_exits() {
    let Some(stub) = Stub::new("group-exit") else {
        return;
    };
    // $0: Python, $1: the stub's script, $2: its directory, which the helper's command
    // line names and where its pid is written.
    let script =
        r#""$0" -c "import time; time.sleep(60)" "$2" & echo $! > "$2/helper"; exec "$0" "$@""#;
    let mut args: Vec<OsString> = vec!["-c".into(), script.into(), stub.python.clone().into()];
    args.extend(stub.args());
    let up = Upstream::stdio("sh", args).await.unwrap();
    let helper = std::fs::read_to_string(stub.dir.join("helper")).unwrap();
    let helper: u32 = helper.trim().parse().unwrap();
    let crashed = soon(call(&up, "crash")).await;
    assert!(is_unavailable(&crashed, "exit status: 3"), "{crashed:?}");
    let marker = stub.dir.display().to_string();
    gone(helper, &marker, "the helper").await;
}

/// A wrapper whose upstream is dropped is killed, and its server with it (one that does
/// not exit when its stdin closes: here, deaf). Before, only the wrapper was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_a_wrapper_runs_is_killed_with_it_when_the_upstream_is_dropped() {
    let Some(stub) = Stub::new("group-drop") else {
        return;
    };
    let up = Upstream::stdio("sh", wrapped(&stub)).await.unwrap();
    assert_eq!(soon(call(&up, "deaf")).await.unwrap(), "deaf from now on");
    drop(up);
    let (pid, marker) = first(&stub);
    gone(pid, &marker, "the server the wrapper ran").await;
}

/// A wrapper whose runtime is dropped (its watcher with it, the upstream still held) is
/// killed, and its server with it. Before, only the wrapper was (`kill_on_drop`).
#[test]
fn a_server_a_wrapper_runs_is_killed_with_it_when_the_runtime_is_dropped() {
    let Some(stub) = Stub::new("group-runtime") else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let up = runtime.block_on(async {
        let up = Upstream::stdio("sh", wrapped(&stub)).await.unwrap();
        assert_eq!(soon(call(&up, "deaf")).await.unwrap(), "deaf from now on");
        up
    });
    drop(runtime);
    let (pid, marker) = first(&stub);
    let waiting = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    waiting.block_on(gone(pid, &marker, "the server the wrapper ran"));
    drop(up);
}

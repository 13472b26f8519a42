//! Official clients drive `examples/conformance` over stdio and Streamable HTTP, in both
//! eras: the Python `mcp` 2.3 client (2026-07-28, and its legacy mode), the TypeScript
//! client 2.4 (2026-07-28), the TypeScript SDK 1.32 client (legacy only, the one most
//! clients in the field are built on) and the MCP Inspector 2.12 CLI (both eras). Every
//! tool the server lists must reach them (a client that cannot validate a tool's schema
//! drops it silently, which is how the `[T, null]` header bug hid). The Python client also
//! drives tasks (the tasks extension) through its extension hooks; the TypeScript client
//! 2.4 rejects `resultType: "task"` and cannot.
//!
//! The clients live in `tests/clients/` (pinned; install with `tests/clients/setup.sh`).
//! Without them these tests skip with a message, unless `MCP_REAL_CLIENTS=required` (set by
//! `.ci/run`), where a missing client is a failure.

mod common;

use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// How to start one client script, or why it cannot be started here.
fn client_command(client: &str, script: &str) -> Result<Command, String> {
    let dir = clients_dir();
    let script = dir.join(script);
    let (program, probe) = match client {
        "python" => (
            std::env::var("MCP_PYTHON")
                .map(PathBuf::from)
                .unwrap_or_else(|_| dir.join(".venv/bin/python")),
            None,
        ),
        "typescript" => (
            PathBuf::from(std::env::var("MCP_NODE").unwrap_or_else(|_| "node".into())),
            Some(dir.join("node_modules/@modelcontextprotocol/client")),
        ),
        "typescript-legacy" => (
            PathBuf::from(std::env::var("MCP_NODE").unwrap_or_else(|_| "node".into())),
            Some(dir.join("node_modules/@modelcontextprotocol/sdk")),
        ),
        other => unreachable!("unknown client {other}"),
    };
    if let Some(probe) = probe
        && !probe.exists()
    {
        return Err(format!("{} is missing", probe.display()));
    }
    if client == "python" && !program.exists() {
        return Err(format!("{} is missing", program.display()));
    }
    let mut cmd = Command::new(program);
    cmd.arg(script);
    Ok(cmd)
}

/// The script that exercises the common surface with each client.
fn script(client: &str) -> &'static str {
    match client {
        "python" => "py_client.py",
        "typescript-legacy" => "ts_legacy_client.mjs",
        _ => "ts_client.mjs",
    }
}

/// Runs a client's main script to the end and parses the one JSON line it prints; `None`
/// when skipped.
fn run_client(client: &str, args: &[&str]) -> Option<Value> {
    run_script(client, script(client), args)
}

/// Runs one client script to the end and parses the one JSON line it prints; `None` when
/// skipped.
fn run_script(client: &str, script: &str, args: &[&str]) -> Option<Value> {
    let mut cmd = match client_command(client, script) {
        Ok(cmd) => cmd,
        Err(why) => {
            let hint = "run tests/clients/setup.sh";
            if std::env::var("MCP_REAL_CLIENTS").as_deref() == Ok("required") {
                panic!("{client} client required but unavailable: {why} ({hint})");
            }
            eprintln!("skipping the {client} client: {why} ({hint})");
            return None;
        }
    };
    let mut child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the {client} client: {e}"));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > CLIENT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{client} client {args:?} hung for {CLIENT_TIMEOUT:?}; stderr:\n{}",
                err.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(
        status.success(),
        "{client} client {args:?} failed ({status}):\nstdout:\n{out}\nstderr:\n{err}"
    );
    let line = out.lines().last().unwrap_or_default();
    Some(serde_json::from_str(line).unwrap_or_else(|e| {
        panic!("{client} client printed no JSON ({e}):\nstdout:\n{out}\nstderr:\n{err}")
    }))
}

/// Every tool name the server lists, fetched over raw stdio (following cursors).
fn listed_tools() -> Vec<String> {
    let mut child = Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn conformance");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let _guard = ChildGuard(child);
    let (mut names, mut cursor) = (Vec::new(), Value::Null);
    for id in 1.. {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({ "cursor": cursor })
        };
        writeln!(stdin, "{}", request(json!(id), "tools/list", params)).unwrap();
        let reply: Value = loop {
            let line = lines.next().expect("server closed stdout").unwrap();
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == json!(id) {
                break msg;
            }
        };
        let result = &reply["result"];
        for tool in result["tools"].as_array().expect("tools") {
            names.push(tool["name"].as_str().unwrap().to_owned());
        }
        cursor = result["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    names.sort();
    names
}

/// What every client must have seen, over either transport, in either era.
fn check(client: &str, seen: &Value) {
    let tools: Vec<String> = serde_json::from_value(seen["tools"].clone()).unwrap();
    let listed = listed_tools();
    assert!(listed.len() >= 20, "conformance lists {listed:?}");
    assert_eq!(tools, listed, "{client} dropped or invented tools");
    assert_eq!(seen["progress_result"], "Progress test completed.");
    // Notifications precede the response on the wire (tests/stdio.rs checks the order); the
    // TypeScript client dispatches notifications a tick later than responses, so it may
    // drop the last one. The first two arrive 50 ms apart and must both be seen.
    let progress: Vec<f64> = serde_json::from_value(seen["progress"].clone()).unwrap();
    assert!(
        progress.starts_with(&[0.0, 50.0]) && progress.len() <= 3,
        "{client} saw progress {progress:?}"
    );
    if client == "python" {
        assert_eq!(progress, [0.0, 50.0, 100.0]);
    }
    // Sampling: an input_required round (2026-07-28) or a request to the client (legacy),
    // answered by the client's own handler.
    assert_eq!(seen["sampling"], "What is the capital of France?");
    assert_eq!(seen["sampled"], "LLM response: Paris");
    assert_eq!(
        seen["header_result"],
        "region=eu-west1 priority=Some(3) verbose=None query=None"
    );
    assert_eq!(seen["elicitation"], "What is your name?");
    assert_eq!(seen["mrtr"], "Hello, Ada!");
    assert_eq!(
        seen["resource"],
        "This is the content of the static text resource."
    );
    assert_eq!(seen["prompt"], "Prompt with arguments: arg1='a', arg2='b'");
    assert_eq!(seen["completion"], json!(["test", "testValue1", "testing"]));
}

fn over_stdio(client: &str) {
    let server = example("conformance");
    let server = server.to_str().unwrap();
    if let Some(seen) = run_client(client, &["stdio", server, "--stdio"]) {
        check(client, &seen);
    }
}

fn over_http(client: &str) {
    let (_server, addr) = spawn_http_example("conformance", &[]);
    let url = format!("http://{addr}/mcp");
    if let Some(seen) = run_client(client, &["http", &url]) {
        check(client, &seen);
    }
}

/// The legacy era: a session opened with `initialize`, `2025-11-25` negotiated, and a
/// resource subscription's update delivered.
fn check_legacy(client: &str, seen: &Value, transport: &str) {
    check(client, seen);
    if !(client == "typescript-legacy" && transport == "stdio") {
        assert_eq!(seen["version"], "2025-11-25", "{client} over {transport}");
    }
    assert_eq!(seen["updated"], "test://watched-resource");
}

fn legacy_over_stdio(client: &str, script: &str, flag: &[&str]) {
    let server = example("conformance");
    let server = server.to_str().unwrap();
    let args: Vec<&str> = flag
        .iter()
        .copied()
        .chain(["stdio", server, "--stdio"])
        .collect();
    if let Some(seen) = run_script(client, script, &args) {
        check_legacy(client, &seen, "stdio");
    }
}

fn legacy_over_http(client: &str, script: &str, flag: &[&str]) {
    let (_server, addr) = spawn_http_example("conformance", &[]);
    let url = format!("http://{addr}/mcp");
    let args: Vec<&str> = flag.iter().copied().chain(["http", url.as_str()]).collect();
    if let Some(seen) = run_script(client, script, &args) {
        check_legacy(client, &seen, "http");
    }
}

#[test]
fn python_client_in_the_legacy_era_over_stdio() {
    legacy_over_stdio("python", "py_client.py", &["--legacy"]);
}

#[test]
fn python_client_in_the_legacy_era_over_http() {
    legacy_over_http("python", "py_client.py", &["--legacy"]);
}

#[test]
fn typescript_sdk_1_client_over_stdio() {
    legacy_over_stdio("typescript-legacy", "ts_legacy_client.mjs", &[]);
}

#[test]
fn typescript_sdk_1_client_over_http() {
    legacy_over_http("typescript-legacy", "ts_legacy_client.mjs", &[]);
}

/// The approvals example asks, in one round, for a form whose fields include optional
/// ones and a documented choice, and for an approval at a URL. The TypeScript SDK 1.x
/// client checks each `elicitation/create` against the 2025-11-25 schema, which refuses
/// a property of two types (`["integer", "null"]`) and a URL request without an
/// `elicitationId`: refused, the call would come back as the tool's error.
fn typescript_sdk_1_client_fills_forms_and_approves(transport: &str) {
    let server = example("approvals");
    let (_http, url);
    let args: Vec<&str> = match transport {
        "stdio" => vec!["stdio", server.to_str().unwrap()],
        _ => {
            let (child, addr) = spawn_http_example("approvals", &["--http", "127.0.0.1:0"]);
            (_http, url) = (child, format!("http://{addr}/mcp"));
            vec!["http", url.as_str()]
        }
    };
    let Some(seen) = run_script("typescript-legacy", "ts_legacy_forms.mjs", &args) else {
        return;
    };
    assert_eq!(seen["isError"], false, "{seen}");
    assert_eq!(
        seen["text"], "deployed api to staging with 3 replicas",
        "{seen}"
    );
    let form = &seen["form"]["requestedSchema"];
    assert_eq!(
        form["properties"]["replicas"],
        json!({"type": "integer", "minimum": 0, "description": "How many replicas (2 if left empty)"}),
        "{seen}"
    );
    assert_eq!(
        form["properties"]["env"]["oneOf"][0]["const"], "staging",
        "{seen}"
    );
    assert_eq!(form["required"], json!(["env"]), "{seen}");
    assert_eq!(
        seen["url"]["url"], "https://changes.example.com/approve/api",
        "{seen}"
    );
    let id = seen["url"]["elicitationId"].as_str().unwrap_or_default();
    assert_eq!(id.len(), 32, "{seen}");
}

#[test]
fn typescript_sdk_1_client_fills_forms_and_approves_over_stdio() {
    typescript_sdk_1_client_fills_forms_and_approves("stdio");
}

#[test]
fn typescript_sdk_1_client_fills_forms_and_approves_over_http() {
    typescript_sdk_1_client_fills_forms_and_approves("http");
}

/// A tool whose output is no object (`list_notes` answers an array) keeps its structured
/// output for a 2025-11-25 client, whose schema wants `outputSchema.type` `"object"` and an
/// object `structuredContent`: both come wrapped in `{"result": ...}`. The TypeScript SDK
/// 1.x client refuses the whole `tools/list` otherwise, and checks the content against the
/// schema.
#[test]
fn typescript_sdk_1_client_gets_array_outputs_as_objects() {
    let server = example("notes");
    let server = server.to_str().unwrap();
    let args = ["list_notes", server];
    let Some(seen) = run_script("typescript-legacy", "ts_legacy_outputs.mjs", &args) else {
        return;
    };
    assert_eq!(seen["schema"]["type"], "object", "{seen}");
    assert_eq!(seen["schema"]["required"], json!(["result"]), "{seen}");
    assert_eq!(
        seen["schema"]["properties"]["result"]["type"], "array",
        "{seen}"
    );
    assert_eq!(seen["isError"], false, "{seen}");
    assert!(seen["structured"]["result"].is_array(), "{seen}");
}

/// One MCP Inspector CLI call (`--protocol-era ERA`); the JSON it printed.
fn inspector(era: &str, target: &[&str], call: &[&str]) -> Option<Value> {
    let dir = clients_dir();
    let bin = dir.join("node_modules/@modelcontextprotocol/inspector");
    if !bin.exists() {
        if std::env::var("MCP_REAL_CLIENTS").as_deref() == Ok("required") {
            panic!("the MCP Inspector is required but missing (run tests/clients/setup.sh)");
        }
        eprintln!("skipping the MCP Inspector: not installed (run tests/clients/setup.sh)");
        return None;
    }
    let node = std::env::var("MCP_NODE").unwrap_or_else(|_| "node".into());
    let cli = dir.join("node_modules/.bin/mcp-inspector");
    // The Inspector writes its settings under HOME: a scratch one per call.
    let home = std::env::temp_dir().join(format!("mcp-inspector-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new(&node);
    cmd.arg(cli)
        .args(["--cli", "--protocol-era", era])
        .args(call)
        // An option after the call ends a list-valued one (`--prompt-args`).
        .args(["--format", "json"])
        .args(target)
        .env("HOME", &home)
        .stdin(Stdio::null());
    let out = cmd.output().expect("run the Inspector");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "Inspector ({era}) {call:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}")))
}

/// The Inspector, in `era`, against `target` (its transport arguments): every tool listed,
/// a call, a resource, a prompt.
fn inspector_session(era: &str, target: &[&str]) {
    let Some(list) = inspector(era, target, &["--method", "tools/list"]) else {
        return;
    };
    let names: Vec<String> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, listed_tools(), "the Inspector ({era}) dropped tools");
    let call = inspector(
        era,
        target,
        &["--method", "tools/call", "--tool-name", "test_simple_text"],
    )
    .unwrap();
    assert_eq!(
        call["result"]["content"][0]["text"],
        "This is a simple text response for testing."
    );
    let read = inspector(
        era,
        target,
        &["--method", "resources/read", "--uri", "test://static-text"],
    )
    .unwrap();
    assert_eq!(
        read["result"]["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let prompt = inspector(
        era,
        target,
        &[
            "--method",
            "prompts/get",
            "--prompt-name",
            "test_prompt_with_arguments",
            "--prompt-args",
            "arg1=a",
            "arg2=b",
        ],
    )
    .unwrap();
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
}

#[test]
fn inspector_over_stdio_in_both_eras() {
    let server = example("conformance");
    let server = server.to_str().unwrap();
    for era in ["legacy", "modern"] {
        inspector_session(era, &[server, "--stdio"]);
    }
}

#[test]
fn inspector_over_http_in_both_eras() {
    let (_server, addr) = spawn_http_example("conformance", &[]);
    let url = format!("http://{addr}/mcp");
    for era in ["legacy", "modern"] {
        inspector_session(era, &["--transport", "http", "--server-url", &url]);
    }
}

#[test]
fn python_client_over_stdio() {
    over_stdio("python");
}

#[test]
fn python_client_over_http() {
    over_http("python");
}

#[test]
fn typescript_client_over_stdio() {
    over_stdio("typescript");
}

#[test]
fn typescript_client_over_http() {
    over_http("typescript");
}

#[test]
fn python_client_drives_tasks_over_stdio() {
    let server = example("conformance");
    let server = server.to_str().unwrap();
    if let Some(seen) = run_script("python", "py_tasks.py", &["stdio", server, "--stdio"]) {
        check_tasks(&seen);
    }
}

#[test]
fn python_client_drives_tasks_over_http() {
    let (_server, addr) = spawn_http_example("conformance", &[]);
    let url = format!("http://{addr}/mcp");
    if let Some(seen) = run_script("python", "py_tasks.py", &["http", &url]) {
        check_tasks(&seen);
    }
}

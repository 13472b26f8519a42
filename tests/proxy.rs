//! Proxying over real transports: a gateway of ours puts two third-party MCP servers
//! behind it — the reference filesystem server (`@modelcontextprotocol/server-filesystem`,
//! TypeScript SDK 1.x, a child process on stdio, legacy era) and a server written with the
//! official Python SDK (`mcp` 2.3.0, over Streamable HTTP, 2026-07-28) — next to a mounted
//! local server and a middleware, and the official Python client drives it all through the
//! gateway, a multi round-trip request of the Python server included. A backend that goes
//! away gives clean errors.
//!
//! Needs the pinned clients of `tests/clients` (`tests/clients/setup.sh`): skipped without
//! them, unless `MCP_REAL_CLIENTS=required` (set by `.ci/run`).

mod common;

use common::{post, request};
use mcp_runtime::middleware::{Next, Request, Timing, from_fn};
use mcp_runtime::proxy::Upstream;
use mcp_runtime::{Server, tool, tools};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Says hello.
#[tool]
async fn hello() -> &'static str {
    "hello from the gateway"
}

fn clients() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// Node, Python and the filesystem server, or `None` (skipped).
fn tools_at_hand() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let node = std::env::var_os("MCP_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let python = std::env::var_os("MCP_PYTHON")
        .map_or_else(|| clients().join(".venv/bin/python"), PathBuf::from);
    let fs = clients().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let node_ok = Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if node_ok && python.exists() && fs.exists() {
        return Some((node, python, fs));
    }
    assert!(
        std::env::var("MCP_REAL_CLIENTS").as_deref() != Ok("required"),
        "MCP_REAL_CLIENTS=required but node ({node_ok}), {} or {} is missing: run tests/clients/setup.sh",
        python.display(),
        fs.display()
    );
    eprintln!("skipped: the pinned clients are not installed (tests/clients/setup.sh)");
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_serves_third_party_servers_to_a_real_client() {
    let Some((node, python, fs_server)) = tools_at_hand() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("mcp-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let file = dir.join("hello.txt");
    std::fs::write(&file, "hi from disk").unwrap();

    // The Python SDK server, over HTTP.
    let port = free_port();
    let mut py_server = Command::new(&python)
        .arg(clients().join("py_server.py"))
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut up = false;
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "the Python server did not start");

    let fs = Upstream::stdio(&node, [fs_server.as_os_str(), dir.as_os_str()])
        .await
        .expect("the filesystem server speaks MCP");
    assert_eq!(
        fs.protocol_version(),
        "2025-11-25",
        "a TypeScript SDK 1.x server: legacy"
    );
    let py = Upstream::http(&url)
        .await
        .expect("the Python server speaks MCP");
    assert_eq!(py.protocol_version(), "2026-07-28");

    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let server = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount(
            "local",
            Server::builder("local", "1.0").tools(tools![hello]),
        )
        .mount("fs", fs.items().await.unwrap())
        .mount("py", py.items().await.unwrap())
        .layer(Timing)
        .layer(from_fn(move |req: Request, next: Next| {
            counted.fetch_add(1, Ordering::SeqCst);
            next.run(req)
        }))
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());

    // The official Python client, through the gateway.
    let script = clients().join("py_proxy.py");
    let gateway = format!("http://{addr}/mcp");
    let path = file.display().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(&python)
            .arg(script)
            .arg(gateway)
            .arg(path)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    let names: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for want in [
        "fs_read_text_file",
        "fs_list_directory",
        "local_hello",
        "py_add",
        "py_shout",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert!(
        names.len() > 10,
        "every filesystem tool survived the client: {names:?}"
    );
    assert_eq!(seen["read"], "hi from disk", "{seen}");
    assert_eq!(seen["read_error"], false);
    assert!(
        seen["listing"].as_str().unwrap().contains("hello.txt"),
        "{seen}"
    );
    assert_eq!(seen["add"], "5");
    assert_eq!(seen["hello"], "hello from the gateway");
    // The Python server's multi round-trip request, through our rounds: its question
    // reached the client, the client's answer and the server's own state came back to it.
    assert_eq!(seen["asked"], "Really deploy?", "{seen}");
    assert_eq!(
        seen["confirm"], "deploy confirmed=True state=pending:deploy",
        "{seen}"
    );
    assert!(
        calls.load(Ordering::SeqCst) >= 4,
        "the middleware saw every call"
    );

    // Prompts pass through too.
    let r = post(addr, &request(json!(1), "prompts/list", json!({}))).json();
    assert_eq!(r["result"]["prompts"][0]["name"], "py_review", "{r}");
    let r = post(
        addr,
        &request(
            json!(2),
            "prompts/get",
            json!({"name": "py_review", "arguments": {"code": "x = 1"}}),
        ),
    )
    .json();
    let text = r["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("x = 1"), "{r}");

    // An upstream error keeps its code; a file outside the allowed directory is the
    // filesystem server's own tool error.
    let r = post(
        addr,
        &request(
            json!(3),
            "tools/call",
            json!({"name": "fs_read_text_file", "arguments": {"path": "/etc/passwd"}}),
        ),
    )
    .json();
    assert_eq!(r["result"]["isError"], true, "{r}");

    // The Python server goes away: a clean tool error, quickly.
    let _ = py_server.kill();
    let _ = py_server.wait();
    let started = std::time::Instant::now();
    let r = post(
        addr,
        &request(
            json!(4),
            "tools/call",
            json!({"name": "py_add", "arguments": {"a": 1, "b": 1}}),
        ),
    )
    .json();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("the upstream server is unavailable"),
        "{r}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The other upstream still serves.
    let r = post(
        addr,
        &request(
            json!(5),
            "tools/call",
            json!({"name": "fs_list_directory", "arguments": {"path": dir.display().to_string()}}),
        ),
    )
    .json();
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("hello.txt"),
        "{r}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_gateway_example_combines_a_mount_a_proxy_and_middleware() {
    let Some((node, _, fs_server)) = tools_at_hand() else {
        return;
    };
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let port = free_port();
    let child = Command::new(common::example("gateway"))
        .env("PORT", port.to_string())
        .env(
            "UPSTREAM_STDIO",
            format!(
                "{} {} {}",
                node.display(),
                fs_server.display(),
                dir.display()
            ),
        )
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _guard = common::ChildGuard(child);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut up = false;
    for _ in 0..200 {
        if std::net::TcpStream::connect(addr).is_ok() {
            up = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(up, "the gateway did not start");
    let r = post(addr, &request(json!(1), "tools/list", json!({}))).json();
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"ops_status") && names.contains(&"fs_list_directory"),
        "{names:?}"
    );
    let r = post(
        addr,
        &request(
            json!(2),
            "tools/call",
            json!({"name": "ops_status", "arguments": {}}),
        ),
    )
    .json();
    assert_eq!(r["result"]["content"][0]["text"], "up; fronting fs", "{r}");
}

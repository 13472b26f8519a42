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

/// `child`, a running server of this process, mounted live under `kid` in what `parent`
/// builds (`Upstream::local`), and followed while the handle lives.
async fn mounted_live(
    child: &Server,
    parent: mcp_runtime::ServerBuilder,
) -> (Server, mcp_runtime::proxy::Following) {
    let kid = Upstream::local(child.clone()).await.unwrap();
    assert_eq!(kid.protocol_version(), "2026-07-28");
    let parent = parent.mount("kid", kid.items().await.unwrap()).build();
    let parent = parent.unwrap();
    let following = kid.follow(&parent, "kid");
    (parent, following)
}

/// Runs a client script to its end; the one JSON object it printed.
async fn client_saw(mut cmd: Command) -> Value {
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

/// `tools/call` over HTTP; the whole answer.
fn call_tool(addr: std::net::SocketAddr, id: u64, name: &str, arguments: Value) -> Value {
    post(
        addr,
        &request(
            json!(id),
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        ),
    )
    .json()
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
    let mut cmd = Command::new(&python);
    cmd.arg(script).arg(gateway).arg(path);
    let seen = client_saw(cmd).await;
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
        "py_look_up",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert!(
        names.len() > 10,
        "every filesystem tool survived the client: {names:?}"
    );
    // The upstream's `look up`, a name tool names may not have, served as `look_up`.
    assert_eq!(seen["look_up"], "gateway: found", "{seen}");
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
    let r = call_tool(addr, 3, "fs_read_text_file", json!({"path": "/etc/passwd"}));
    assert_eq!(r["result"]["isError"], true, "{r}");

    // The Python server goes away: a clean tool error, quickly.
    let _ = py_server.kill();
    let _ = py_server.wait();
    let started = std::time::Instant::now();
    let r = call_tool(addr, 4, "py_add", json!({"a": 1, "b": 1}));
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
    let r = call_tool(
        addr,
        5,
        "fs_list_directory",
        json!({"path": dir.display().to_string()}),
    );
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
    let r = call_tool(addr, 2, "ops_status", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "up; fronting fs", "{r}");
}

/// The "everything" reference server, or `None` (skipped like the rest).
fn everything() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let (node, python, _) = tools_at_hand()?;
    let ev = clients().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        ev.exists(),
        "{} is missing: run tests/clients/setup.sh",
        ev.display()
    );
    Some((node, python, ev))
}

/// The everything server as two upstreams: a child on stdio, and one over Streamable
/// HTTP on a free port (its process returned, to end).
async fn everything_upstreams(
    node: &std::path::Path,
    ev: &std::path::Path,
) -> (std::process::Child, Upstream, Upstream) {
    let port = free_port();
    let ev_http = Command::new(node)
        .arg(ev)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port).await;
    let evs = Upstream::stdio(node, [ev.as_os_str(), "stdio".as_ref()])
        .await
        .expect("the everything server speaks MCP on stdio");
    let evh = Upstream::http(&format!("http://127.0.0.1:{port}/mcp"))
        .await
        .expect("the everything server speaks MCP on HTTP");
    (ev_http, evs, evh)
}

async fn wait_for_port(port: u16) {
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on port {port}");
}

/// A 2025-11-25 upstream asks during a call (elicitation, sampling): its requests reach
/// our client, as `input_required` rounds for a 2026-07-28 client and as requests in its
/// session for a legacy one, and the answers go back to the waiting upstream call; over
/// stdio and over Streamable HTTP. Its resource templates pass through, its prompt
/// arguments and template variables complete through the gateway, and the tools it
/// registers only after `initialize` (announced with `list_changed`) are followed, its
/// task-only `simulate-research-query` among them: called plainly, the gateway runs it as
/// an upstream task, whose question reaches the client too, and whose status messages
/// come as progress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_upstreams_requests_reach_clients_of_either_era() {
    let Some((node, python, ev)) = everything() else {
        return;
    };
    let (mut ev_http, evs, evh) = everything_upstreams(&node, &ev).await;
    assert_eq!(evs.protocol_version(), "2025-11-25");
    assert_eq!(evh.protocol_version(), "2025-11-25");
    let server = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("evs", evs.items().await.unwrap())
        .mount("evh", evh.items().await.unwrap())
        .build()
        .unwrap();
    let _f1 = evs.follow(&server, "evs");
    let _f2 = evh.follow(&server, "evh");
    let addr = common::serve_in_background(server.http());
    // It registers its elicitation and sampling tools once initialized, and says so.
    let mut listed = Vec::new();
    for _ in 0..100 {
        let r = post(addr, &request(json!(1), "tools/list", json!({}))).json();
        listed = r["result"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect();
        let want = [
            "evs_trigger-elicitation-request",
            "evh_trigger-sampling-request",
        ];
        if want.iter().all(|w| listed.iter().any(|n| n == w)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        listed
            .iter()
            .any(|n| n == "evh_trigger-elicitation-request"),
        "{listed:?}"
    );
    // Its completions, through the gateway: a prompt argument narrowed by the one chosen
    // before it, and a template variable.
    for up in ["evs", "evh"] {
        let prompt = json!({"type": "ref/prompt", "name": format!("{up}_completable-prompt")});
        let r = complete(
            addr,
            prompt.clone(),
            json!({"name": "department", "value": "S"}),
            Value::Null,
        );
        assert_eq!(
            r["result"]["completion"]["values"],
            json!(["Sales", "Support"]),
            "{up}: {r}"
        );
        let r = complete(
            addr,
            prompt,
            json!({"name": "name", "value": ""}),
            json!({"department": "Engineering"}),
        );
        assert_eq!(
            r["result"]["completion"]["values"],
            json!(["Alice", "Bob", "Charlie"]),
            "{up}: {r}"
        );
        let template = json!({
            "type": "ref/resource",
            "uri": format!("{up}+demo://resource/dynamic/text/{{resourceId}}"),
        });
        let id = |v: &str| json!({"name": "resourceId", "value": v});
        let r = complete(addr, template.clone(), id("7"), Value::Null);
        assert_eq!(
            r["result"]["completion"]["values"],
            json!(["7"]),
            "{up}: {r}"
        );
        let r = complete(addr, template, id("x"), Value::Null);
        assert_eq!(r["result"]["completion"]["values"], json!([]), "{up}: {r}");
    }

    for legacy in [false, true] {
        let script = clients().join("py_proxy_everything.py");
        let gateway = format!("http://{addr}/mcp");
        let mut cmd = Command::new(&python);
        cmd.arg(script);
        if legacy {
            cmd.arg("--legacy");
        }
        cmd.arg(gateway);
        let seen = client_saw(cmd).await;
        let version = if legacy { "2025-11-25" } else { "2026-07-28" };
        assert_eq!(seen["version"], version, "{seen}");
        for up in ["evs", "evh"] {
            let elicited = seen[format!("{up}_elicited")].as_str().unwrap();
            assert!(
                elicited.contains("- Name: Ada Lovelace") && elicited.contains("terms: true"),
                "legacy={legacy} {up}: {seen}"
            );
            assert_eq!(seen[format!("{up}_elicited_error")], false);
            assert_eq!(
                seen[format!("{up}_progress")],
                json!([1.0, 2.0, 3.0, 4.0]),
                "legacy={legacy} {up}: the upstream's progress reached the client: {seen}"
            );
            let sampled = seen[format!("{up}_sampled")].as_str().unwrap();
            assert!(
                sampled.contains("forty-two"),
                "legacy={legacy} {up}: {seen}"
            );
        }
        for up in ["evs", "evh"] {
            // The task-only tool ran as an upstream task, its question answered.
            let report = seen[format!("{up}_research")].as_str().unwrap();
            assert!(
                report.contains("# Research Report: python (snake)"),
                "legacy={legacy} {up}: {seen}"
            );
            assert_eq!(seen[format!("{up}_research_error")], false, "{seen}");
            // Its stage messages came as progress while it ran.
            let said = seen[format!("{up}_research_progress")].as_array().unwrap();
            assert!(
                said.iter().any(|m| m.as_str().is_some_and(|m| [
                    "Gathering sources",
                    "Analyzing content"
                ]
                .iter()
                .any(|s| m.starts_with(s)))),
                "legacy={legacy} {up}: {seen}"
            );
        }
        assert_eq!(seen["clarified"].as_array().unwrap().len(), 2, "{seen}");
        assert_eq!(seen["asked"].as_array().unwrap().len(), 2, "{seen}");
        assert!(
            seen["sampled"][0].as_str().unwrap().contains("the answer?"),
            "{seen}"
        );
        assert_eq!(seen["sum"], "The sum of 2 and 40 is 42.", "{seen}");
        let templates = seen["templates"].as_array().unwrap();
        assert!(
            templates
                .iter()
                .any(|t| t == "evs+demo://resource/dynamic/text/{resourceId}"),
            "{seen}"
        );
        assert_eq!(
            seen["template_read"][0], "evs+demo://resource/dynamic/text/7",
            "{seen}"
        );
        assert!(
            seen["template_read"][1]
                .as_str()
                .unwrap()
                .starts_with("Resource 7: This is a plaintext resource"),
            "{seen}"
        );
    }
    let _ = ev_http.kill();
    let _ = ev_http.wait();
}

/// A 2025-11-25 upstream's task-only tool (the everything server's
/// `simulate-research-query`, `execution.taskSupport: "required"`) run as a task of the
/// gateway, over stdio and over Streamable HTTP at once: the upstream task's stage
/// messages become the gateway task's status message, its question is the gateway task's
/// `input_required`, the answer reaches it, and its report is the gateway task's result
/// (without the upstream's task id in `_meta`). Cancelling the gateway's task cancels
/// the upstream's (`tasks/list` of the upstream shows it cancelled).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_upstreams_task_tool_runs_as_a_task_of_the_gateway() {
    use mcp_runtime::config::RequestState;
    use mcp_runtime::testing::{Answers, TestClient};
    let Some((node, _, ev)) = everything() else {
        return;
    };
    let (mut ev_http, evs, evh) = everything_upstreams(&node, &ev).await;
    let gateway = Server::builder("gateway", "1.0")
        .request_state(RequestState::single_instance())
        .mount("evs", evs.items().await.unwrap())
        .mount("evh", evh.items().await.unwrap())
        .build()
        .unwrap();
    // It registers the tool once initialized, and says so.
    let _f1 = evs.follow(&gateway, "evs");
    let _f2 = evh.follow(&gateway, "evh");
    for _ in 0..100 {
        let names = gateway.tool_names();
        if ["evs", "evh"]
            .iter()
            .all(|up| names.contains(&format!("{up}_simulate-research-query")))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // 350 ms after `initialize` it asks for roots once, outside of any call; on stdio,
    // which does not say what a request is about, during a call it would be that call's
    // question. Let it ask first.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let client = TestClient::new(gateway.clone()).with_tasks();
    let research = async |up: &str, upstream: &Upstream| {
        let tool = format!("{up}_simulate-research-query");
        let question = json!({"topic": "python", "ambiguous": true});
        let handle = client.start_task(&tool, question).await.unwrap();
        let id = handle["taskId"].as_str().unwrap().to_owned();
        let staged = |t: &Value| {
            let m = t["statusMessage"].as_str().unwrap_or_default();
            m.starts_with("Gathering sources") || m.starts_with("Analyzing content")
        };
        let working = client.wait_task(&id, Duration::from_secs(10), staged).await;
        assert!(working.is_ok(), "{up}: no stage message: {working:?}");
        let asking = client
            .wait_task(&id, Duration::from_secs(15), |t| {
                t["status"] == "input_required"
            })
            .await
            .unwrap();
        let q = &asking["inputRequests"]["upstream.q1"];
        assert_eq!(q["method"], "elicitation/create", "{up}: {asking}");
        let message = q["params"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("multiple interpretations"),
            "{up}: {asking}"
        );
        let answer = Answers::new().accept("upstream.q1", json!({"interpretation": "snake"}));
        client.answer_task(&id, &answer).await.unwrap();
        let end = client
            .wait_task(&id, Duration::from_secs(15), |t| {
                t["status"] != "input_required" && t["status"] != "working"
            })
            .await
            .unwrap();
        assert_eq!(end["status"], "completed", "{up}: {end}");
        let report = end["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            report.contains("# Research Report: python (snake)"),
            "{up}: {report}"
        );
        assert!(
            end["result"]["_meta"]
                .get("io.modelcontextprotocol/related-task")
                .is_none(),
            "{up}: {end}"
        );

        // Given up: cancelled upstream.
        let handle = client
            .start_task(&tool, json!({"topic": "rust"}))
            .await
            .unwrap();
        let id = handle["taskId"].as_str().unwrap().to_owned();
        client
            .wait_task(&id, Duration::from_secs(10), staged)
            .await
            .unwrap();
        client.cancel_task(&id).await.unwrap();
        let mut statuses = Vec::new();
        for _ in 0..100 {
            let listed = upstream.request("tasks/list", json!({})).await.unwrap();
            statuses = listed["tasks"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["status"].as_str().unwrap_or_default().to_owned())
                .collect();
            if statuses.iter().any(|s| s == "cancelled") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(statuses, ["completed", "cancelled"], "{up}");
    };
    tokio::join!(research("evs", &evs), research("evh", &evh));
    let _ = ev_http.kill();
    let _ = ev_http.wait();
}

/// Changes a tool at runtime; the gateway's `follow` applies it once the list's `ttlMs`
/// has run out.
#[tool]
async fn version() -> &'static str {
    "v1"
}

/// A 2026-07-28 upstream (one of ours, over HTTP) whose lists say `ttlMs: 1000` and that
/// does not take `subscriptions/listen`: a tool it adds and one it removes while serving
/// show in the gateway's list within a few
/// seconds (through `Server::add_tool` and `remove_tool`, which tell the gateway's
/// listeners as tests/listen.rs shows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_upstreams_lists_are_read_again_when_their_ttl_runs_out() {
    use mcp_runtime::config::Caching;
    use mcp_runtime::protocol::{CacheHints, CacheScope};
    let upstream = Server::builder("upstream", "1.0")
        .caching(Caching::default().lists(CacheHints::new(1000, CacheScope::Public)))
        .tools(tools![hello, version])
        .build()
        .unwrap();
    // It refuses `subscriptions/listen`: only the TTL can bring its changes.
    let router = upstream
        .clone()
        .http()
        .into_router()
        .layer(axum::middleware::from_fn(
            |req: axum::extract::Request, next: axum::middleware::Next| async move {
                use axum::response::IntoResponse;
                if req
                    .headers()
                    .get("mcp-method")
                    .is_some_and(|m| m == "subscriptions/listen")
                {
                    return hyper::StatusCode::METHOD_NOT_ALLOWED.into_response();
                }
                next.run(req).await
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    let up = Upstream::http(&format!("http://{up_addr}/mcp"))
        .await
        .unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("up", up.items().await.unwrap())
        .build()
        .unwrap();
    let _following = up.follow(&gateway, "up");
    assert_eq!(gateway.tool_names(), ["up_hello", "up_version"]);

    assert!(upstream.remove_tool("version"));
    upstream.add_tool(text_tool("shout", "HEY")).unwrap();
    let names = tool_names_once(&gateway, 50, Duration::from_millis(100), |n| {
        n == ["up_hello", "up_shout"]
    })
    .await;
    assert_eq!(names, ["up_hello", "up_shout"]);
    // The new tool forwards.
    let addr = common::serve_in_background(gateway.http());
    let r = call_tool(addr, 1, "up_shout", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "HEY", "{r}");
}

/// `upstream` served over HTTP and mounted under `up` in a gateway reaching it with
/// `options`; the gateway's address.
async fn gateway_in_front_of(
    upstream: Server,
    options: mcp_runtime::proxy::HttpOptions,
) -> std::net::SocketAddr {
    let up_addr = common::serve_in_background(upstream.http());
    let up = Upstream::http_with(&format!("http://{up_addr}/mcp"), options)
        .await
        .unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("up", up.items().await.unwrap())
        .build()
        .unwrap();
    common::serve_in_background(gateway.http())
}

/// Mirrors `region` (and `limit`) into `Mcp-Param-*` headers.
#[tool]
async fn route(
    #[arg(header = "Region")] region: String,
    #[arg(header = "Limit")] limit: Option<i32>,
) -> String {
    format!("{region}|{limit:?}")
}

/// A 2026-07-28 HTTP upstream checks the `Mcp-Param-*` headers of its `x-mcp-header`
/// tools: the gateway sends them as a conforming client would (a non-ASCII value in
/// Base64). Before, it sent none, and every call of such a tool failed with `-32020`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_tool_with_header_parameters_gets_its_headers_upstream() {
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![route])
        .build()
        .unwrap();
    let addr = gateway_in_front_of(upstream, Default::default()).await;
    for (arguments, region, answer) in [
        (
            json!({"region": "eu-west1", "limit": 3}),
            "eu-west1",
            "eu-west1|Some(3)",
        ),
        (
            json!({"region": "Zürich"}),
            "=?base64?WsO8cmljaA==?=",
            "Zürich|None",
        ),
    ] {
        let body = request(
            json!(1),
            "tools/call",
            json!({"name": "up_route", "arguments": arguments}),
        );
        let mut extra = vec![("Mcp-Param-Region", region)];
        if arguments.get("limit").is_some() {
            extra.push(("Mcp-Param-Limit", "3"));
        }
        let r = common::post_with(addr, &body, &[], &extra).json();
        assert_eq!(r["result"]["content"][0]["text"], answer, "{r}");
    }
}

/// Answers after ten seconds, saying nothing meanwhile.
#[tool]
async fn stall() -> &'static str {
    tokio::time::sleep(Duration::from_secs(10)).await;
    "late"
}

/// An HTTP upstream that takes a call and then says nothing, not even the response's
/// head, is given up on after `HttpOptions::timeout` of silence: the call is a tool error
/// then, not a wait as long as the upstream's. Before, the head was awaited with no limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_http_upstream_is_given_up_on_after_its_timeout() {
    use mcp_runtime::proxy::HttpOptions;
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![stall])
        .build()
        .unwrap();
    let options = HttpOptions::new().timeout(Duration::from_secs(1));
    let addr = gateway_in_front_of(upstream, options).await;
    let started = std::time::Instant::now();
    let r = tokio::task::spawn_blocking(move || call_tool(addr, 1, "up_stall", json!({})))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
}

/// A tool without arguments that answers `text`.
fn text_tool(name: &str, text: &'static str) -> mcp_runtime::def::ToolDef {
    mcp_runtime::def::ToolDef::new(
        name,
        mcp_runtime::handler::Signature::new(),
        move |_call| async move { Ok::<_, mcp_runtime::Error>(text) },
    )
}

/// `server`'s tool names once `done` holds of them, asked up to `tries` times `every`
/// apart; the last names seen otherwise.
async fn tool_names_once(
    server: &Server,
    tries: u32,
    every: Duration,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let mut names = Vec::new();
    for _ in 0..tries {
        names = server.tool_names();
        if done(&names) {
            break;
        }
        tokio::time::sleep(every).await;
    }
    names
}

/// Serves `router` over TLS on a free port with a fresh self-signed certificate for
/// `localhost`; the address and the certificate (PEM).
async fn serve_tls(router: axum::Router) -> (std::net::SocketAddr, String) {
    serve_tls_as(router, vec!["localhost".to_owned()]).await
}

/// Like [`serve_tls`], with a certificate for `names`.
async fn serve_tls_as(router: axum::Router, names: Vec<String>) -> (std::net::SocketAddr, String) {
    use tokio_rustls::rustls;
    let key = rcgen::generate_simple_self_signed(names).unwrap();
    let pem = key.cert.pem();
    let der = rustls::pki_types::PrivateKeyDer::Pkcs8(key.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![key.cert.der().clone()], der)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                // A handshake the client refuses is that client's failure, not ours.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(router);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (addr, pem)
}

/// An `https://` upstream whose certificate a private authority signed: trusted with
/// `HttpOptions::root_certificates_pem`, refused without it; the headers of the options
/// reach it on every request (here, the key it demands).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_upstream_with_a_private_authority_and_a_credential() {
    use axum::response::IntoResponse;
    use mcp_runtime::proxy::{HttpOptions, UpstreamError};
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![hello])
        .build()
        .unwrap();
    let router = upstream
        .http()
        .into_router()
        .layer(axum::middleware::from_fn(
            |req: axum::extract::Request, next: axum::middleware::Next| async move {
                if req
                    .headers()
                    .get("x-upstream-key")
                    .is_none_or(|v| v != "k1")
                {
                    return hyper::StatusCode::UNAUTHORIZED.into_response();
                }
                next.run(req).await
            },
        ));
    let (addr, ca) = serve_tls(router).await;
    let url = format!("https://localhost:{}/mcp", addr.port());

    // Not trusted: a clean error naming the certificate.
    let e = Upstream::http_with(&url, HttpOptions::new().header("x-upstream-key", "k1"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, UpstreamError::Unavailable(m) if m.contains("certificate")),
        "{e}"
    );
    // Trusted, without the key: the upstream's 401, as an error.
    let trusted = HttpOptions::new()
        .root_certificates_pem(ca.as_bytes())
        .unwrap();
    let e = Upstream::http_with(&url, trusted.clone())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("401"), "{e}");
    // Trusted, with the key: it serves.
    let up = Upstream::http_with(&url, trusted.header("x-upstream-key", "k1"))
        .await
        .unwrap();
    assert_eq!(up.protocol_version(), "2026-07-28");
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("up", up.items().await.unwrap())
        .build()
        .unwrap();
    let gw = common::serve_in_background(gateway.http());
    let r = call_tool(gw, 1, "up_hello", json!({}));
    assert_eq!(
        r["result"]["content"][0]["text"], "hello from the gateway",
        "{r}"
    );
    // Bad settings are refused before anything is sent.
    assert!(
        HttpOptions::new()
            .root_certificates_pem(b"not pem")
            .is_err()
    );
    let e = Upstream::http_with(&url, HttpOptions::new().header("bad name", "x"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("bad header name"), "{e}");
    let e = Upstream::http("ftp://localhost/mcp").await.unwrap_err();
    assert!(e.to_string().contains("http:// or https://"), "{e}");
}

/// Counts to three, telling its progress.
#[tool]
async fn steps(cx: mcp_runtime::Context) -> &'static str {
    for i in 1..=3 {
        cx.progress().report(f64::from(i), Some(3.0), None);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    "done"
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sure {
    /// Really?
    sure: bool,
}

/// Asks before it acts.
#[tool]
async fn careful(input: mcp_runtime::Input) -> Result<String, mcp_runtime::Error> {
    let s: Sure = input.elicit("sure", "Really?").await?.accepted()?;
    Ok(format!("sure={}", s.sure))
}

/// A running server of this process mounted live (`Upstream::local` + `follow`): what it
/// adds and removes while running shows in the parent at once (told on its listen
/// stream, long before its five-minute list TTL), its progress reaches the parent's
/// client, and its question passes through the parent's rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_server_mounted_live_changes_reports_and_asks_through_its_parent() {
    let child = Server::builder("child", "1.0")
        .tools(tools![steps, careful])
        .build()
        .unwrap();
    let parent = Server::builder("parent", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .tools(tools![hello]);
    let (parent, _following) = mounted_live(&child, parent).await;
    let addr = common::serve_in_background(parent.clone().http());
    assert_eq!(parent.tool_names(), ["hello", "kid_careful", "kid_steps"]);

    // Progress, through the pipe and the parent's event stream.
    let mut body = request(
        json!(7),
        "tools/call",
        json!({"name": "kid_steps", "arguments": {}}),
    );
    body["params"]["_meta"]["progressToken"] = json!("p-1");
    let events = post(addr, &body).sse_events();
    let progress: Vec<f64> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .map(|e| {
            assert_eq!(e["params"]["progressToken"], "p-1");
            e["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0], "{events:?}");
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "done"
    );

    // A runtime change of the child, in the parent at once.
    child.add_tool(text_tool("late", "late but here")).unwrap();
    let every = Duration::from_millis(50);
    let has_late = |n: &[String]| n.iter().any(|n| n == "kid_late");
    let names = tool_names_once(&parent, 40, every, has_late).await;
    assert!(names.iter().any(|n| n == "kid_late"), "{names:?}");
    let r = call_tool(addr, 8, "kid_late", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "late but here", "{r}");
    assert!(child.remove_tool("late"));
    let names = tool_names_once(&parent, 40, every, |n| !has_late(n)).await;
    assert_eq!(names, ["hello", "kid_careful", "kid_steps"]);

    // The child's question, as the parent's round; the answer goes back to it.
    let mut body = request(
        json!(9),
        "tools/call",
        json!({"name": "kid_careful", "arguments": {}}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    let r = post(addr, &body).json();
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let asked = r["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(asked.len(), 1, "{r}");
    let (key, question) = asked.iter().next().unwrap();
    assert_eq!(question["params"]["message"], "Really?");
    body["params"]["inputResponses"] =
        json!({ key.clone(): {"action": "accept", "content": {"sure": true}} });
    body["params"]["requestState"] = r["result"]["requestState"].clone();
    let r = post(addr, &body).json();
    assert_eq!(r["result"]["content"][0]["text"], "sure=true", "{r}");
}

static HUNG_UP: AtomicUsize = AtomicUsize::new(0);

/// Counts, in its counter, the handlers that stopped (returned, or had their future
/// dropped).
struct Ends(&'static AtomicUsize);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Waits until it is cancelled (its future dropped, or its token fired).
#[tool]
async fn hang(cx: mcp_runtime::Context) -> &'static str {
    let _stopped = Ends(&HUNG_UP);
    cx.cancellation().cancelled().await;
    "cancelled"
}

/// A forwarded call given up on (its client went away) is cancelled upstream
/// (`notifications/cancelled`), so the upstream's work stops too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_call_given_up_is_cancelled_upstream() {
    let child = Server::builder("child", "1.0")
        .tools(tools![hang])
        .build()
        .unwrap();
    let kid = Upstream::local(child).await.unwrap();
    let parent = Server::builder("parent", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("kid", kid.items().await.unwrap())
        .build()
        .unwrap();
    let client = mcp_runtime::testing::TestClient::new(parent);
    let call = client.call_tool("kid_hang", json!({}));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err(),
        "it hangs until cancelled"
    );
    for _ in 0..50 {
        if HUNG_UP.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        HUNG_UP.load(Ordering::SeqCst),
        1,
        "the upstream saw the cancel"
    );
}

/// A legacy client's `notifications/cancelled` for a call forwarded to a 2025-11-25
/// upstream reaches the upstream at once: in a legacy session the call has no rounds to
/// be parked between, so it is the request's own and goes with it. The everything
/// server's stdin, copied to a file on its way, shows the gateway's cancel of that call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_clients_cancel_reaches_a_legacy_upstream_at_once() {
    use common::{Sse, post_bytes, raw};
    let Some((node, _, ev)) = everything() else {
        return;
    };
    let log = std::env::temp_dir().join(format!("mcp-proxy-cancel-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    // `sh -c 'tee LOG | exec "$0" "$1" stdio' node ev`
    let script = format!("tee '{}' | exec \"$0\" \"$1\" stdio", log.display());
    let args = [
        std::ffi::OsString::from("-c"),
        script.into(),
        node.into_os_string(),
        ev.into_os_string(),
    ];
    let evs = Upstream::stdio("sh", args).await.unwrap();
    assert_eq!(evs.protocol_version(), "2025-11-25");
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("evs", evs.items().await.unwrap())
        .build()
        .unwrap();
    let addr = common::serve_in_background(gateway.http());
    let post = |body: &Value, session: Option<&str>| {
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        if let Some(s) = session {
            h.push(("Mcp-Session-Id", s));
        }
        post_bytes(addr, body.to_string().as_bytes(), &h)
    };
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw-legacy", "version": "1.0"}}});
    let r = raw(addr, &post(&hello, None));
    assert_eq!(r.status, 200, "{}", r.text());
    let session = r.header("mcp-session-id").unwrap().to_owned();
    let inited = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(raw(addr, &post(&inited, Some(&session))).status, 202);
    // A call that runs for a minute, its progress coming.
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {
        "name": "evs_trigger-long-running-operation",
        "arguments": {"duration": 60, "steps": 60},
        "_meta": {"progressToken": "p"}}});
    let mut stream = Sse::send(addr, &post(&call, Some(&session)));
    let first = stream
        .next(Duration::from_secs(10))
        .expect("its first progress");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    let sent = || std::fs::read_to_string(&log).unwrap_or_default();
    let forwarded: Value = sent()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["method"] == "tools/call")
        .expect("the call went upstream");
    assert!(!sent().contains("notifications/cancelled"), "{}", sent());
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 11, "reason": "changed my mind"}});
    assert_eq!(raw(addr, &post(&cancel, Some(&session))).status, 202);
    let mut told = None;
    for _ in 0..100 {
        told = sent()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|m| m["method"] == "notifications/cancelled");
        if told.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let told = told.expect("the upstream was told within 5 s");
    assert_eq!(told["params"]["requestId"], forwarded["id"], "{told}");
    let _ = std::fs::remove_file(&log);
}

/// A memo, by id (a template the upstream lists no resource of).
#[mcp_runtime::resource("memo://{id}")]
async fn memo(id: u32) -> String {
    format!("memo {id}")
}

/// A resource update of a live child reaches the parent's subscriber under the mounted
/// URI (the parent served over a byte stream here, its client writing lines). The child
/// has more resources than one `subscriptions/listen` may name (256): the parent asks in
/// several, and the last one's updates come too. A URI only the child's template matches
/// is not acknowledged: nothing watches it upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_childs_resource_updates_reach_the_parents_subscribers() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = Server::builder("child", "1.0");
    for n in 1..=300 {
        child = child.resource(mcp_runtime::def::ResourceDef::new(
            format!("notes://{n}"),
            "note",
            mcp_runtime::handler::Signature::new(),
            |_call| async { Ok::<_, mcp_runtime::Error>("a note") },
        ));
    }
    let child = child
        .resources(mcp_runtime::resources![memo])
        .build()
        .unwrap();
    let parent = Server::builder("parent", "1.0");
    let (parent, _following) = mounted_live(&child, parent).await;
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(theirs);
    tokio::spawn(parent.serve_io(r, w, std::future::pending()));
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = tokio::io::BufReader::new(read).lines();
    let listen = request(
        json!("sub"),
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["kid+notes://300", "kid+memo://5"]}}),
    );
    write
        .write_all(format!("{listen}\n").as_bytes())
        .await
        .unwrap();
    let ack: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["kid+notes://300"]),
        "{ack}"
    );
    // The child's update, told until the parent's subscriber hears it (the follower
    // subscribes upstream as it starts).
    let mut heard = None;
    for _ in 0..50 {
        child.notify_resource_updated("notes://300");
        if let Ok(Ok(Some(line))) =
            tokio::time::timeout(Duration::from_millis(100), lines.next_line()).await
        {
            heard = Some(serde_json::from_str::<Value>(&line).unwrap());
            break;
        }
    }
    let heard = heard.expect("the parent's subscriber heard the child's update");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert_eq!(heard["params"]["uri"], "kid+notes://300", "{heard}");
}

/// Suggests members of the department the client already chose; for "All", more than one
/// result holds.
async fn members(partial: String, known: mcp_runtime::KnownArguments) -> Vec<String> {
    let names: Vec<String> = match known.get("department") {
        Some("Sales") => ["David", "Dana", "Eve"].map(str::to_owned).to_vec(),
        Some("All") => (0..150).map(|i| format!("member-{i}")).collect(),
        _ => Vec::new(),
    };
    names
        .into_iter()
        .filter(|n| n.starts_with(&partial))
        .collect()
}

/// Asks to promote someone.
#[mcp_runtime::prompt]
async fn promote(
    department: String,
    #[arg(complete = members)] name: String,
) -> mcp_runtime::PromptMessage {
    mcp_runtime::PromptMessage::user(format!("Promote {name} in {department}"))
}

async fn note_ids(partial: String) -> Vec<String> {
    ["1", "12", "2"]
        .into_iter()
        .filter(|i| i.starts_with(&partial))
        .map(str::to_owned)
        .collect()
}

/// One note, by id.
#[mcp_runtime::resource("notes://{id}")]
async fn note(#[arg(complete = note_ids)] id: u64) -> Result<String, mcp_runtime::Error> {
    if id == 0 {
        let missing = mcp_runtime::protocol::RpcError::resource_not_found("notes://0");
        return Err(mcp_runtime::Error::protocol(missing));
    }
    Ok(format!("note {id}"))
}

/// `completion/complete` of the gateway's client, `ref` and `argument` as given; the
/// whole answer.
fn complete(addr: std::net::SocketAddr, reference: Value, argument: Value, known: Value) -> Value {
    let mut params = json!({"ref": reference, "argument": argument});
    if !known.is_null() {
        params["context"] = json!({ "arguments": known });
    }
    post(addr, &request(json!(1), "completion/complete", params)).json()
}

/// A proxied server's completions (one of ours, `Upstream::local`, 2026-07-28): the
/// arguments of its prompts and the variables of its templates complete through the
/// gateway, under the mounted names, with what the client already chose; the upstream's
/// `total` and `hasMore` reach the client, and so does its error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_servers_prompts_and_templates_complete_through_the_gateway() {
    let child = Server::builder("child", "1.0")
        .prompts(mcp_runtime::prompts![promote])
        .resources(mcp_runtime::resources![note])
        .build()
        .unwrap();
    let kid = Upstream::local(child.clone()).await.unwrap();
    let parent = Server::builder("parent", "1.0")
        .tools(tools![hello])
        .mount("kid", kid.items().await.unwrap())
        .build()
        .unwrap();
    let addr = common::serve_in_background(parent.clone().http());
    let discover = post(addr, &request(json!(1), "server/discover", json!({}))).json();
    assert!(
        discover["result"]["capabilities"]["completions"].is_object(),
        "{discover}"
    );
    let prompt = json!({"type": "ref/prompt", "name": "kid_promote"});
    let arg = |name: &str, value: &str| json!({"name": name, "value": value});

    let r = complete(
        addr,
        prompt.clone(),
        arg("name", "D"),
        json!({"department": "Sales"}),
    );
    assert_eq!(
        r["result"]["completion"],
        json!({"values": ["David", "Dana"], "total": 2, "hasMore": false}),
        "{r}"
    );
    // Without the department, the upstream knows no one; an argument it has no completer
    // for completes to nothing.
    let r = complete(addr, prompt.clone(), arg("name", "D"), Value::Null);
    assert_eq!(r["result"]["completion"]["values"], json!([]), "{r}");
    let r = complete(addr, prompt.clone(), arg("department", "S"), Value::Null);
    assert_eq!(r["result"]["completion"]["total"], 0, "{r}");
    // The upstream cut its list at a hundred and said how many there are.
    let r = complete(
        addr,
        prompt.clone(),
        arg("name", ""),
        json!({"department": "All"}),
    );
    let c = &r["result"]["completion"];
    assert_eq!(c["values"].as_array().unwrap().len(), 100, "{r}");
    assert_eq!(c["values"][0], "member-0");
    assert_eq!(
        (&c["total"], &c["hasMore"]),
        (&json!(150), &json!(true)),
        "{r}"
    );

    let templates = post(
        addr,
        &request(json!(2), "resources/templates/list", json!({})),
    )
    .json();
    let uri = templates["result"]["resourceTemplates"][0]["uriTemplate"].clone();
    assert_eq!(uri, "kid+notes://{id}", "{templates}");
    let template = json!({"type": "ref/resource", "uri": uri});
    let r = complete(addr, template.clone(), arg("id", "1"), Value::Null);
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["1", "12"]),
        "{r}"
    );
    let r = complete(addr, template, arg("nope", "1"), Value::Null);
    assert_eq!(
        r["error"]["code"], -32602,
        "not a variable of the template: {r}"
    );
    // The upstream's not found names the URI the gateway serves, not the upstream's own.
    let read = |uri: &str| {
        let body = request(json!(3), "resources/read", json!({ "uri": uri }));
        post(addr, &body).json()
    };
    assert_eq!(
        read("kid+notes://7")["result"]["contents"][0]["text"],
        "note 7"
    );
    let missing = read("kid+notes://0");
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(
        missing["error"]["data"]["uri"], "kid+notes://0",
        "{missing}"
    );
    assert_eq!(
        missing["error"]["message"], "Resource not found: kid+notes://0",
        "{missing}"
    );
    // Another `-32602` naming the URI (a variable the upstream cannot read) is not
    // made into "not found": its message passes through, naming the served URI.
    let invalid = read("kid+notes://x");
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    let message = invalid["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`id`") && !message.contains("not found"),
        "{invalid}"
    );
    assert_eq!(
        invalid["error"]["data"]["uri"], "kid+notes://x",
        "{invalid}"
    );

    // The upstream no longer has the prompt (and the gateway does not follow it): its
    // error reaches the client as it was.
    assert!(child.remove_prompt("promote"));
    let r = complete(
        addr,
        prompt,
        arg("name", "D"),
        json!({"department": "Sales"}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("promote"),
        "{r}"
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Go {
    /// Go ahead?
    go: bool,
}

/// Rebuilds the index once someone says so (asked from inside its task).
#[tool(task = "required")]
async fn reindex(
    input: mcp_runtime::Input,
    progress: mcp_runtime::Progress,
) -> Result<String, mcp_runtime::Error> {
    progress.report(1.0, Some(2.0), Some("waiting for a go"));
    let go: Go = input.elicit("go", "Rebuild the index?").await?.accepted()?;
    Ok(format!("reindexed: go={}", go.go))
}

/// Fails as a task: a JSON-RPC error, so the task is `failed`.
#[tool(task = "required")]
async fn doomed() -> Result<String, mcp_runtime::Error> {
    Err(mcp_runtime::Error::protocol(
        mcp_runtime::protocol::RpcError::invalid_params("no such index"),
    ))
}

/// Asks, but waits only a moment for the answer: its task then fails.
#[tool(task = "required")]
async fn impatient(input: mcp_runtime::Input) -> Result<String, mcp_runtime::Error> {
    tokio::select! {
        go = input.elicit::<Go>("go", "Quick, go?") => Ok(format!("go={}", go?.accepted()?.go)),
        () = tokio::time::sleep(Duration::from_millis(300)) => Err(mcp_runtime::Error::protocol(
            mcp_runtime::protocol::RpcError::invalid_params("too slow"),
        )),
    }
}

static VIGILS_ENDED: AtomicUsize = AtomicUsize::new(0);

/// Keeps watch until it is cancelled.
#[tool(task = "optional")]
async fn vigil(cx: mcp_runtime::Context) -> &'static str {
    let _ended = Ends(&VIGILS_ENDED);
    cx.cancellation().cancelled().await;
    "relieved"
}

/// A 2026-07-28 upstream that offers tasks, over a real port: through the gateway, a
/// client that asks for a task gets one of the gateway's, which follows the upstream's
/// task to its end: its status message, its question (answered with `tasks/update` on
/// both sides), its result or its failure; cancelling the gateway's task cancels the
/// upstream's. A client that does not ask for a task gets the upstream's `-32021`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_upstreams_tasks_run_through_the_gateway() {
    use mcp_runtime::config::{RequestState, Tasks};
    use mcp_runtime::testing::{Answers, TestClient};
    let child = Server::builder("indexer", "1.0")
        .tools(tools![reindex, doomed, impatient, vigil, hello])
        .request_state(RequestState::single_instance())
        .tasks(Tasks::default().poll_interval(Some(Duration::from_millis(20))))
        .build()
        .unwrap();
    let child_addr = common::serve_in_background(child.clone().http());
    let up = Upstream::http(&format!("http://{child_addr}/mcp"))
        .await
        .unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(RequestState::single_instance())
        .mount("idx", up.items().await.unwrap())
        .build()
        .unwrap();
    let client = TestClient::new(gateway.clone()).with_tasks();

    let answers = Answers::new().accept("upstream.task.go", json!({"go": true}));
    let done = client
        .run_task("idx_reindex", json!({}), &answers)
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{:?}", done.task);
    assert_eq!(done.text(), "reindexed: go=true");
    assert_eq!(done.answered, ["upstream.task.go"]);

    // While it waits for the answer, the gateway's task shows the upstream's status.
    let handle = client.start_task("idx_reindex", json!({})).await.unwrap();
    let id = handle["taskId"].as_str().unwrap().to_owned();
    let asking = client
        .wait_task(&id, Duration::from_secs(10), |t| {
            t["status"] == "input_required"
        })
        .await
        .unwrap();
    assert_eq!(asking["statusMessage"], "waiting for a go", "{asking}");
    let q = &asking["inputRequests"]["upstream.task.go"];
    assert_eq!(q["params"]["message"], "Rebuild the index?", "{asking}");
    client
        .answer_task(
            &id,
            &Answers::new().accept("upstream.task.go", json!({"go": false})),
        )
        .await
        .unwrap();
    let end = client
        .wait_task(&id, Duration::from_secs(10), |t| t["status"] == "completed")
        .await
        .unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "reindexed: go=false");

    // The upstream task failed: the gateway's fails with the same error.
    let failed = client
        .run_task("idx_doomed", json!({}), &Answers::new())
        .await
        .unwrap();
    assert_eq!(failed.status(), "failed", "{:?}", failed.task);
    assert_eq!(failed.task["error"]["code"], -32602, "{:?}", failed.task);
    assert_eq!(failed.task["error"]["message"], "no such index");

    // The upstream task fails while the client's answer is awaited: the gateway, still
    // watching it, gives the question up and fails with it.
    let handle = client.start_task("idx_impatient", json!({})).await.unwrap();
    let id = handle["taskId"].as_str().unwrap().to_owned();
    let asking = client
        .wait_task(&id, Duration::from_secs(10), |t| t["status"] != "working")
        .await
        .unwrap();
    assert_eq!(asking["status"], "input_required", "{asking}");
    let end = client
        .wait_task(&id, Duration::from_secs(10), |t| t["status"] == "failed")
        .await
        .unwrap();
    assert_eq!(end["error"]["code"], -32602, "{end}");
    assert_eq!(end["error"]["message"], "too slow", "{end}");

    // Cancelling the gateway's task cancels the upstream's.
    let before = VIGILS_ENDED.load(Ordering::SeqCst);
    let handle = client.start_task("idx_vigil", json!({})).await.unwrap();
    let id = handle["taskId"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        VIGILS_ENDED.load(Ordering::SeqCst),
        before,
        "still watching"
    );
    client.cancel_task(&id).await.unwrap();
    for _ in 0..100 {
        if VIGILS_ENDED.load(Ordering::SeqCst) > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        VIGILS_ENDED.load(Ordering::SeqCst),
        before + 1,
        "the upstream's vigil was cancelled"
    );

    // A tool that is not a task upstream runs in the gateway's task all the same.
    let plain = client
        .run_task("idx_hello", json!({}), &Answers::new())
        .await
        .unwrap();
    assert_eq!(plain.text(), "hello from the gateway");

    // Without the extension, the upstream's task-only tool refuses, and says why.
    let untasked = TestClient::new(gateway);
    let e = untasked
        .call_tool("idx_reindex", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32021, "{e:?}");
    assert_eq!(
        e.data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
}

/// The official Python client (`mcp` 2.3.0, `py_tasks.py`) drives tasks through a gateway
/// in front of the conformance example, a child process on stdio: the same script gets the
/// same answers as from the example itself (tests/real_clients.rs), through the gateway's
/// tasks following the example's: a task resolved by polling, an `isError` task, a
/// question answered with `tasks/update`, a cancel, an unknown task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_drives_an_upstreams_tasks_through_the_gateway() {
    let Some((_, python, _)) = tools_at_hand() else {
        return;
    };
    let up = Upstream::stdio(common::example("conformance"), ["--stdio"])
        .await
        .expect("the conformance example speaks MCP on stdio");
    assert_eq!(up.protocol_version(), "2026-07-28");
    let gateway = up
        .items()
        .await
        .unwrap()
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    let addr = common::serve_in_background(gateway.http());
    let mut cmd = Command::new(&python);
    cmd.arg(clients().join("py_tasks.py"))
        .arg("http")
        .arg(format!("http://{addr}/mcp"));
    let seen = client_saw(cmd).await;
    common::check_tasks(&seen);
}

/// A board page, as HTML.
#[mcp_runtime::resource("ui://board/{page}.html")]
async fn board(page: String) -> String {
    format!("<p>{page}</p>")
}

/// A ticket.
#[mcp_runtime::resource("tickets://{id}")]
async fn ticket(id: u32) -> String {
    format!("ticket {id}")
}

/// An upstream's templates mounted two levels deep: each read reaches the upstream under
/// the upstream's own URI, whatever the scheme (`ui://` views get the namespaces as path
/// segments, the others as scheme prefixes), and comes back under the served one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_template_mounted_two_deep_is_read_under_the_upstreams_uri() {
    let child = Server::builder("child", "1.0")
        .resources(mcp_runtime::resources![board, ticket])
        .build()
        .unwrap();
    let kid = Upstream::local(child).await.unwrap();
    let desk = Server::builder("desk", "1.0").mount("kid", kid.items().await.unwrap());
    let parent = Server::builder("parent", "1.0")
        .mount("eu", desk)
        .build()
        .unwrap();
    let client = mcp_runtime::testing::TestClient::new(parent);
    let templates: Vec<Value> = client
        .list_all("resources/templates/list", "resourceTemplates")
        .await
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].clone())
        .collect();
    assert_eq!(
        templates,
        [
            json!("eu+kid+tickets://{id}"),
            json!("ui://eu/kid/board/{page}.html")
        ]
    );
    for (uri, text) in [
        ("eu+kid+tickets://7", "ticket 7"),
        ("ui://eu/kid/board/home.html", "<p>home</p>"),
    ] {
        let (r, _) = client
            .request("resources/read", json!({"uri": uri}))
            .await
            .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
        assert_eq!(r["contents"][0]["text"], text, "{uri}: {r}");
        assert_eq!(r["contents"][0]["uri"], uri, "{r}");
    }
}

/// The forecast, shown in a view.
#[tool(ui = "ui://forecast/view.html")]
async fn forecast(city: String) -> mcp_runtime::Json<Vec<String>> {
    mcp_runtime::Json(vec![format!("{city}: sunny")])
}

/// Its view.
#[mcp_runtime::resource(
    "ui://forecast/view.html",
    app(prefers_border = true, connect_domains("https://api.example"))
)]
async fn forecast_view() -> &'static str {
    "<!doctype html><title>Forecast</title>"
}

/// Names a view its server does not list.
#[tool]
async fn orphan() -> &'static str {
    "orphan"
}

/// An MCP App through a gateway, mounted under the first segment of its view's URI (so
/// the upstream's URIs look mounted already): the upstream's tool keeps its view
/// (`_meta.ui`, under the mounted URI), title, icon, `_meta` and `outputSchema`; its view resource is served as a
/// view (MIME type, `_meta.ui` in the listing and the contents) and the gateway declares
/// the extension. A tool naming a view the upstream does not list loses that name (it
/// would point at nothing, or at another server's view), and the gateway is still built.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_app_passes_through_a_gateway_with_its_view() {
    use mcp_runtime::Icon;
    let tools = tools![forecast].into_iter().map(|t| {
        t.title("Forecast")
            .icon(Icon::new("https://x.example/sun.png").size("48x48"))
            .meta("com.example/team", json!("weather"))
    });
    let orphan = tools![orphan]
        .into_iter()
        .map(|t| t.meta("ui", json!({"resourceUri": "ui://elsewhere/v.html"})));
    let child = Server::builder("child", "1.0")
        .tools(tools.chain(orphan))
        .resources(mcp_runtime::resources![forecast_view])
        .build()
        .unwrap();
    let upstream_tools = mcp_runtime::testing::TestClient::new(child.clone())
        .list_all("tools/list", "tools")
        .await
        .unwrap();
    let kid = Upstream::local(child).await.unwrap();
    let parent = Server::builder("parent", "1.0")
        .mount("forecast", kid.items().await.unwrap())
        .build()
        .unwrap();
    let client = mcp_runtime::testing::TestClient::new(parent);

    let tools = client.list_all("tools/list", "tools").await.unwrap();
    let by_name = |n: &str| tools.iter().find(|t| t["name"] == n).cloned().unwrap();
    let tool = by_name("forecast_forecast");
    let upstream = upstream_tools
        .iter()
        .find(|t| t["name"] == "forecast")
        .unwrap();
    assert_eq!(
        tool["_meta"]["ui"]["resourceUri"],
        "ui://forecast/forecast/view.html"
    );
    assert_eq!(tool["_meta"]["com.example/team"], "weather");
    assert_eq!(tool["title"], "Forecast");
    assert_eq!(
        tool["icons"],
        json!([{"src": "https://x.example/sun.png", "sizes": ["48x48"]}])
    );
    assert_eq!(tool["outputSchema"], upstream["outputSchema"], "{tool}");
    assert!(tool["outputSchema"].is_object(), "{upstream}");
    let orphan = by_name("forecast_orphan");
    assert!(orphan["_meta"]["ui"].is_null(), "{orphan}");

    let resources = client
        .list_all("resources/list", "resources")
        .await
        .unwrap();
    let view = &resources[0];
    assert_eq!(
        view["uri"], "ui://forecast/forecast/view.html",
        "{resources:?}"
    );
    assert_eq!(view["mimeType"], mcp_runtime::apps::MIME_TYPE);
    assert_eq!(view["_meta"]["ui"]["prefersBorder"], true, "{view}");
    let (read, _) = client
        .request(
            "resources/read",
            json!({"uri": "ui://forecast/forecast/view.html"}),
        )
        .await
        .unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], "ui://forecast/forecast/view.html");
    assert_eq!(contents["mimeType"], mcp_runtime::apps::MIME_TYPE);
    assert_eq!(
        contents["_meta"]["ui"]["csp"]["connectDomains"],
        json!(["https://api.example"]),
        "{read}"
    );
    let (discover, _) = client.request("server/discover", json!({})).await.unwrap();
    let extensions = &discover["capabilities"]["extensions"];
    assert!(
        extensions.get(mcp_runtime::apps::EXTENSION).is_some(),
        "{discover}"
    );
    let out = client
        .call_tool("forecast_forecast", json!({"city": "Oslo"}))
        .await
        .unwrap();
    assert!(!out.is_error(), "{out:?}");
}

/// An MCP App a followed upstream adds while running (its view, then its tool) shows in
/// the gateway with its view, and goes again when the upstream takes it away (the tool,
/// then the view). Whether the gateway reads the two changes in one pass or two depends on
/// timing; `follow`'s unit test applies each case in turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_app_added_upstream_while_running_is_followed() {
    let child = Server::builder("child", "1.0")
        .tools(tools![hello])
        .resources(mcp_runtime::resources![ticket])
        .build()
        .unwrap();
    let parent = Server::builder("parent", "1.0");
    let (parent, _following) = mounted_live(&child, parent).await;
    let every = Duration::from_millis(50);
    let has_app = |n: &[String]| n.iter().any(|n| n == "kid_forecast");

    let view = mcp_runtime::resources![forecast_view].pop().unwrap();
    child.add_resource(view).unwrap();
    child.add_tool(tools![forecast].pop().unwrap()).unwrap();
    let names = tool_names_once(&parent, 60, every, has_app).await;
    assert_eq!(names, ["kid_forecast", "kid_hello"]);
    let client = mcp_runtime::testing::TestClient::new(parent.clone());
    let tools = client.list_all("tools/list", "tools").await.unwrap();
    assert_eq!(
        tools[0]["_meta"]["ui"]["resourceUri"],
        "ui://kid/forecast/view.html"
    );
    let resources = client
        .list_all("resources/list", "resources")
        .await
        .unwrap();
    assert_eq!(resources[0]["uri"], "ui://kid/forecast/view.html");

    assert!(child.remove_tool("forecast"));
    assert!(child.remove_resource("ui://forecast/view.html"));
    let names = tool_names_once(&parent, 60, every, |n| !has_app(n)).await;
    assert_eq!(names, ["kid_hello"]);
    for _ in 0..60 {
        let resources = client
            .list_all("resources/list", "resources")
            .await
            .unwrap();
        if resources.is_empty() {
            return;
        }
        tokio::time::sleep(every).await;
    }
    panic!("the view is still served");
}

/// An MCP App written with the official TypeScript server and ext-apps' own helpers
/// (`registerAppTool` writes the view under `ui.resourceUri` and the flat
/// `ui/resourceUri`), behind a gateway: both keys name the mounted view, which is served
/// as a view with its settings; the official Python client, in either era, lists the
/// tool, reads the view and calls the tool through the gateway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ext_apps_server_keeps_its_view_behind_a_gateway() {
    let Some((node, python, _)) = tools_at_hand() else {
        return;
    };
    let script = clients().join("apps_server.mjs");
    let apps = Upstream::stdio(&node, [script.as_os_str()]).await.unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("wx", apps.items().await.unwrap())
        .build()
        .unwrap();
    let addr = common::serve_in_background(gateway.clone().http());
    for legacy in [false, true] {
        let mut cmd = Command::new(&python);
        cmd.arg(clients().join("py_apps.py"));
        if legacy {
            cmd.arg("--legacy");
        }
        cmd.arg(format!("http://{addr}/mcp"));
        let seen = client_saw(cmd).await;
        let version = if legacy { "2025-11-25" } else { "2026-07-28" };
        assert_eq!(seen["version"], version, "{seen}");
        let view = "ui://wx/clock/view.html";
        assert_eq!(
            seen["tools"]["wx_clock"]["ui"]["resourceUri"], view,
            "{seen}"
        );
        assert_eq!(seen["tools"]["wx_clock"]["ui/resourceUri"], view, "{seen}");
        assert_eq!(
            seen["resources"][view],
            mcp_runtime::apps::MIME_TYPE,
            "{seen}"
        );
        assert_eq!(seen["view"]["uri"], view, "{seen}");
        assert_eq!(seen["view"]["meta"]["ui"]["prefersBorder"], true, "{seen}");
        assert_eq!(seen["called"], "12:00 in UTC", "{seen}");
    }
    let client = mcp_runtime::testing::TestClient::new(gateway);
    let tools = client.list_all("tools/list", "tools").await.unwrap();
    let clock = &tools[0];
    assert_eq!(clock["name"], "wx_clock");
    assert_eq!(clock["title"], "Clock");
    assert_eq!(
        clock["_meta"]["ui"]["resourceUri"], "ui://wx/clock/view.html",
        "{clock}"
    );
    assert_eq!(
        clock["_meta"]["ui/resourceUri"], "ui://wx/clock/view.html",
        "{clock}"
    );
    let resources = client
        .list_all("resources/list", "resources")
        .await
        .unwrap();
    assert_eq!(resources[0]["uri"], "ui://wx/clock/view.html");
    assert_eq!(
        resources[0]["_meta"]["ui"]["csp"]["connectDomains"],
        json!(["https://time.example"])
    );
    let (read, _) = client
        .request("resources/read", json!({"uri": "ui://wx/clock/view.html"}))
        .await
        .unwrap();
    assert_eq!(
        read["contents"][0]["uri"], "ui://wx/clock/view.html",
        "{read}"
    );
    assert_eq!(
        read["contents"][0]["text"],
        "<!doctype html><title>Clock</title>"
    );
    assert_eq!(read["contents"][0]["_meta"]["ui"]["prefersBorder"], true);
    let out = client
        .call_tool("wx_clock", json!({"zone": "UTC"}))
        .await
        .unwrap();
    assert_eq!(out.text(), "12:00 in UTC");
}

/// A hand-written 2025-11-25 server whose lists have entries this framework's rules
/// refuse (`tests/clients/odd_server.py`): the gateway is still built, serves what it can
/// (a tool named with a space as `look_up`, one too long once mounted cut with a hash, a
/// resource with a blank name under its URI,
/// the first of two clashing templates, a tool listed twice once) and leaves out the rest
/// (a tool whose schema is no object, one with no name, a bad URI, a URI with variables).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_odd_upstream_item_does_not_keep_the_gateway_from_being_built() {
    let Some((_, python, _)) = tools_at_hand() else {
        return;
    };
    let odd = clients().join("odd_server.py");
    let up = Upstream::stdio(&python, [odd.as_os_str()]).await.unwrap();
    assert_eq!(up.protocol_version(), "2025-11-25");
    let gateway = Server::builder("gateway", "1.0")
        .mount("odd", up.items().await.unwrap())
        .build()
        .expect("built, without what it cannot serve");
    let client = mcp_runtime::testing::TestClient::new(gateway);
    let names = |l: Vec<Value>, key: &str| -> Vec<String> {
        l.iter()
            .map(|v| v[key].as_str().unwrap().to_owned())
            .collect()
    };
    let tools = names(
        client.list_all("tools/list", "tools").await.unwrap(),
        "name",
    );
    let long = "get_repos_owner_repo_pulls_pull_number_reviews_review_id_comments";
    // Too long once mounted: cut, with a hash of the whole name.
    let short = tools
        .iter()
        .find(|n| n.starts_with("odd_get_repos_owner_repo_pulls"))
        .unwrap_or_else(|| panic!("{tools:?}"))
        .clone();
    assert_eq!(short.len(), 64, "{short}");
    assert_eq!(tools, ["odd_echo", short.as_str(), "odd_look_up"]);
    let out = client.call_tool(&short, json!({})).await.unwrap();
    assert_eq!(out.text(), format!("{long}: {{}}"));
    let resources = client
        .list_all("resources/list", "resources")
        .await
        .unwrap();
    assert_eq!(resources.len(), 1, "{resources:?}");
    assert_eq!(resources[0]["uri"], "odd+x://1");
    assert_eq!(resources[0]["name"], "x://1");
    let templates = client
        .list_all("resources/templates/list", "resourceTemplates")
        .await
        .unwrap();
    assert_eq!(names(templates, "uriTemplate"), ["odd+t://{id}"]);
    let out = client
        .call_tool("odd_look_up", json!({"q": 1}))
        .await
        .unwrap();
    assert_eq!(out.text(), r#"look up: {"q": 1}"#);
    let out = client
        .call_tool("odd_echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(out.text(), r#"echo: {"text": "hi"}"#);
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Total {
    sum: i64,
}

/// Adds, with structured output.
#[tool]
async fn total(a: i64, b: i64) -> mcp_runtime::Json<Total> {
    mcp_runtime::Json(Total { sum: a + b })
}

/// Finds a total, or says there is none (`null`).
#[tool]
async fn maybe(n: i64) -> mcp_runtime::Json<Option<Total>> {
    mcp_runtime::Json((n != 0).then_some(Total { sum: n }))
}

/// The gateway serves an upstream tool's `outputSchema`, so it holds the upstream's
/// results to it (TOOL-14): one whose `structuredContent` breaks the schema, or lacks it,
/// is the tool's error (`isError`), not a success that breaks the schema it served. The
/// error does not quote the result (before, it did: `"zero" is not an integer`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_result_that_breaks_its_output_schema_is_the_tools_error() {
    // The upstream's middleware spoils the result for `a = 0` and `a = 1`.
    let spoil = from_fn(|req: Request, next: Next| async move {
        let a = req.arguments.get("a").and_then(Value::as_i64);
        let mut r = next.run(req).await;
        if let mcp_runtime::middleware::Response::Result(v) = &mut r {
            match a {
                Some(0) => v["structuredContent"] = json!({"sum": "zero"}),
                Some(1) => drop(v.as_object_mut().map(|o| o.remove("structuredContent"))),
                _ => {}
            }
        }
        r
    });
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![total, maybe])
        .layer(spoil)
        .build()
        .unwrap();
    let addr = gateway_in_front_of(upstream, Default::default()).await;
    let listed = post(addr, &request(json!(1), "tools/list", json!({}))).json();
    let tools = listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let total = tools.iter().find(|t| t["name"] == "up_total").cloned();
    let schema = &total.unwrap_or_default()["outputSchema"];
    assert_eq!(schema["properties"]["sum"]["type"], "integer", "{listed}");
    let call = |a: i64| call_tool(addr, 2, "up_total", json!({"a": a, "b": 3}));
    let fine = call(2);
    assert_eq!(
        fine["result"]["structuredContent"],
        json!({"sum": 5}),
        "{fine}"
    );
    // A `null` structured result, which its schema allows, is no error.
    let none = call_tool(addr, 3, "up_maybe", json!({"n": 0}));
    assert_eq!(none["result"].get("isError"), None, "{none}");
    let some = call_tool(addr, 4, "up_maybe", json!({"n": 4}));
    assert_eq!(
        some["result"]["structuredContent"],
        json!({"sum": 4}),
        "{some}"
    );
    for (a, says) in [
        (0, "does not match its output schema"),
        (1, "no structuredContent"),
    ] {
        let r = call(a);
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains(says), "{r}");
        eprintln!("a result that breaks its output schema, the client read: {text}");
        // What the result held is not quoted (it is in the log).
        assert!(!text.contains("zero"), "{r}");
    }
}

/// What an HTTP upstream's error page says (a stack trace, internal host names) stays in
/// the gateway's log, at warn, naming the upstream: the client's error names the
/// upstream's HTTP status only. A JSON-RPC error that the upstream sends with a failure
/// status is meant for clients, and passes, with the status. Before, the client read the
/// first 200 characters of the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_upstreams_error_page_reaches_the_log_not_the_client() {
    common::capture_logs();
    const SECRET: &str = "db-7.internal:5432 marker-7f3a";
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![hello, version])
        .build()
        .unwrap();
    // `hello` fails with an error page, `version` with a JSON-RPC error.
    let router = upstream.http().into_router().layer(axum::middleware::from_fn(
        |req: axum::extract::Request, next: axum::middleware::Next| async move {
            use axum::response::IntoResponse;
            use hyper::StatusCode;
            let (method, name) = {
                let header = |name: &str| {
                    let value = req.headers().get(name).and_then(|v| v.to_str().ok());
                    value.unwrap_or_default().to_owned()
                };
                (header("mcp-method"), header("mcp-name"))
            };
            if method != "tools/call" {
                return next.run(req).await;
            }
            match name.as_str() {
                "hello" => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [("content-type", "text/html")],
                    format!("<pre>Traceback: cannot connect to {SECRET}</pre>"),
                )
                    .into_response(),
                _ => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [("content-type", "application/json")],
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"overloaded, try later"}}"#,
                )
                    .into_response(),
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let up = Upstream::http(&up_url).await.unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("up", up.items().await.unwrap())
        .build()
        .unwrap();
    let addr = common::serve_in_background(gateway.http());

    let r = tokio::task::spawn_blocking(move || call_tool(addr, 1, "up_hello", json!({})))
        .await
        .unwrap();
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("HTTP 500 Internal Server Error"), "{r}");
    assert!(
        !r.to_string().contains("marker-7f3a") && !r.to_string().contains("Traceback"),
        "{r}"
    );
    // The page is in the log, with the upstream's URL.
    for _ in 0..250 {
        let logs = common::logs();
        if logs.lines().any(|l| {
            l.contains("WARN") && l.contains(SECRET) && l.contains(&format!("upstream={up_url}"))
        }) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let logs = common::logs();
    assert!(
        logs.lines()
            .any(|l| l.contains("WARN") && l.contains(SECRET) && l.contains(&up_url)),
        "{logs}"
    );

    let r = tokio::task::spawn_blocking(move || call_tool(addr, 2, "up_version", json!({})))
        .await
        .unwrap();
    let said = r.to_string();
    assert!(
        said.contains("overloaded, try later") && said.contains("HTTP 503"),
        "{r}"
    );
}

/// A TCP relay on a port of its own to a backend that can be switched while it runs,
/// each switch ending the connections relayed so far (so the gateway's next request
/// opens a new one, to the new backend); closed, its port refuses connections.
struct Relay {
    addr: std::net::SocketAddr,
    to: Arc<std::sync::Mutex<std::net::SocketAddr>>,
    relayed: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    accepting: tokio::task::AbortHandle,
}

impl Relay {
    async fn to(backend: std::net::SocketAddr) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let to = Arc::new(std::sync::Mutex::new(backend));
        let relayed = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (target, conns) = (Arc::clone(&to), Arc::clone(&relayed));
        let accepting = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let backend = *target.lock().unwrap();
                let relay = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(backend).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                conns.lock().unwrap().push(relay.abort_handle());
            }
        })
        .abort_handle();
        Relay {
            addr,
            to,
            relayed,
            accepting,
        }
    }

    fn end_relayed(&self) {
        for c in self.relayed.lock().unwrap().drain(..) {
            c.abort();
        }
    }

    async fn switch(&self, backend: std::net::SocketAddr) {
        *self.to.lock().unwrap() = backend;
        self.end_relayed();
        // The gateway's pooled connection sees its end before its next request.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    async fn close(&self) {
        self.accepting.abort();
        self.end_relayed();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The text of a forwarded call's tool error, which must be one.
fn tool_error_text(r: &Value) -> String {
    assert_eq!(r["result"]["isError"], true, "{r}");
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits (up to 5 s) until a line of the runtime's logs holds each of `all`; that line.
async fn log_line_with(all: &[&str]) -> String {
    for _ in 0..250 {
        let logs = common::logs();
        if let Some(l) = logs.lines().find(|l| all.iter().all(|a| l.contains(a))) {
            return l.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "no line of the logs holds all of {all:?}:\n{}",
        common::logs()
    );
}

/// An HTTP upstream that cannot be reached any more, or whose TLS fails, is a tool error
/// with a short fixed reason, classified from the error's kind: the error's own text
/// (which may name internal hosts, addresses, a certificate's names) goes to the log,
/// naming the upstream by its URL. Before, the client read it all ("cannot reach it:
/// client error (Connect): ...", a certificate's names included).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_upstreams_connection_and_tls_failures_reach_the_log_not_the_client() {
    use mcp_runtime::proxy::HttpOptions;
    common::capture_logs();
    const HIDDEN: &str = "db-7.internal";
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![hello])
        .build()
        .unwrap();
    let router = upstream.http().into_router();
    let (good, ca) = serve_tls(router.clone()).await;
    // Trusted too, but a certificate for another (internal) name.
    let (misnamed, other_ca) = serve_tls_as(router.clone(), vec![HIDDEN.to_owned()]).await;
    let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_addr = plain.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(plain, router).await });

    let relay = Relay::to(good).await;
    let url = format!("https://localhost:{}/mcp", relay.addr.port());
    let roots = format!("{ca}{other_ca}");
    let options = HttpOptions::new()
        .root_certificates_pem(roots.as_bytes())
        .unwrap();
    let up = Upstream::http_with(&url, options).await.unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("up", up.items().await.unwrap())
        .build()
        .unwrap();
    let gw = common::serve_in_background(gateway.http());
    let call =
        |id: u64| tokio::task::spawn_blocking(move || call_tool(gw, id, "up_hello", json!({})));
    let r = call(1).await.unwrap();
    assert_eq!(
        r["result"]["content"][0]["text"], "hello from the gateway",
        "{r}"
    );

    // Plain HTTP where TLS was expected.
    relay.switch(plain_addr).await;
    let text = tool_error_text(&call(2).await.unwrap());
    eprintln!("TLS to a plain HTTP port, the client read: {text}");
    assert_eq!(
        text,
        "the upstream server is unavailable: cannot connect (TLS failed)"
    );
    // A certificate for another name: its names stay in the log.
    relay.switch(misnamed).await;
    let r = call(3).await.unwrap();
    let text = tool_error_text(&r);
    eprintln!("a certificate for another name, the client read: {text}");
    assert_eq!(
        text,
        "the upstream server is unavailable: cannot connect (TLS failed: its certificate is not valid for its name)"
    );
    assert!(!r.to_string().contains(HIDDEN), "{r}");
    // Told at warn the first time, naming the upstream by its URL and its mount.
    let warned = format!("upstream={url} mount=up");
    let line = log_line_with(&["WARN", "InvalidContentType", &warned]).await;
    eprintln!("the log: {line}");
    let line = log_line_with(&[HIDDEN, &warned]).await;
    eprintln!("the log: {line}");
    // The port closed: refused.
    relay.close().await;
    let r = call(4).await.unwrap();
    let text = tool_error_text(&r);
    eprintln!("a closed port, the client read: {text}");
    assert_eq!(
        text,
        "the upstream server is unavailable: cannot connect (connection refused)"
    );
    assert!(
        !text.contains("os error") && !text.contains("127.0.0.1"),
        "{text}"
    );
    let line = log_line_with(&["refused", &warned]).await;
    eprintln!("the log: {line}");
}

/// An upstream whose answers to `tools/call`, `prompts/get` and `resources/read` are
/// JSON-RPC answers of the wrong shape, each quoting `secret`; its address.
async fn upstream_answering_wrong_shapes(secret: &'static str) -> std::net::SocketAddr {
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![hello])
        .prompts(mcp_runtime::prompts![promote])
        .resources(mcp_runtime::resources![ticket])
        .build()
        .unwrap();
    let router = upstream
        .http()
        .into_router()
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| async move {
                use axum::response::IntoResponse;
                let (parts, body) = req.into_parts();
                let bytes = axum::body::to_bytes(body, 1 << 20)
                    .await
                    .unwrap_or_default();
                let msg: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                let wrong = match msg["method"].as_str().unwrap_or_default() {
                    "tools/call" => json!({"content": format!("see {secret}")}),
                    "prompts/get" => json!({"messages": [
                        {"role": secret, "content": {"type": "text", "text": "x"}}
                    ]}),
                    "resources/read" => json!({"contents": [
                        {"uri": "tickets://1", "text": 7, "mimeType": secret}
                    ]}),
                    _ => {
                        let req = axum::extract::Request::from_parts(parts, bytes.into());
                        return next.run(req).await;
                    }
                };
                let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": wrong});
                axum::Json(answer).into_response()
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// An upstream's answer of the wrong shape (a tool result, a prompt, a resource's
/// contents) is an error saying which field or shape is wrong, never what it held: the
/// client reads no value of it, the log has an excerpt, naming the upstream. Before, the
/// client read serde's message, which quotes the value (`invalid type: string "see
/// ...", expected a sequence`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_answer_of_the_wrong_shape_reaches_the_log_not_the_client() {
    common::capture_logs();
    const SECRET: &str = "db-9.internal:6379 marker-c41d";
    let up_addr = upstream_answering_wrong_shapes(SECRET).await;
    let up_url = format!("http://{up_addr}/mcp");
    let up = Upstream::http(&up_url).await.unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("up", up.items().await.unwrap())
        .build()
        .unwrap();
    let addr = common::serve_in_background(gateway.http());
    let asked = |id: u64, method: &'static str, params: Value| {
        tokio::task::spawn_blocking(move || post(addr, &request(json!(id), method, params)).json())
    };

    let r = asked(
        1,
        "tools/call",
        json!({"name": "up_hello", "arguments": {}}),
    )
    .await
    .unwrap();
    let text = tool_error_text(&r);
    eprintln!("a tool result, the client read: {text}");
    assert_eq!(
        text,
        "the upstream server's answer was not valid: invalid type: string, expected a sequence"
    );
    let r = asked(
        2,
        "prompts/get",
        json!({"name": "up_promote", "arguments": {"department": "a", "name": "b"}}),
    )
    .await
    .unwrap();
    eprintln!("a prompt, the client read: {r}");
    assert!(!r.to_string().contains("marker-c41d"), "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the upstream server's answer was not valid")),
        "{r}"
    );
    let r = asked(3, "resources/read", json!({"uri": "up+tickets://1"}))
        .await
        .unwrap();
    eprintln!("a resource, the client read: {r}");
    assert!(!r.to_string().contains("marker-c41d"), "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the upstream server's answer was not valid")),
        "{r}"
    );
    let line = log_line_with(&["WARN", SECRET, &format!("upstream={up_url} mount=up")]).await;
    eprintln!("the log: {line}");
}

/// `upstream`'s router, where every `tools/call` is answered `502` with `page`, an error
/// page the gateway logs, naming the upstream.
fn error_page_on_calls(upstream: Server, page: &'static str) -> axum::Router {
    upstream
        .http()
        .into_router()
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| async move {
                use axum::response::IntoResponse;
                if req
                    .headers()
                    .get("mcp-method")
                    .is_some_and(|m| m == "tools/call")
                {
                    return (hyper::StatusCode::BAD_GATEWAY, page).into_response();
                }
                next.run(req).await
            },
        ))
}

/// An upstream's URL with its API key in the path (`https://host/<key>/mcp`, as many
/// hosted servers give) is logged with that segment as `…`: what the log says of an
/// upstream never holds its key. Before, the log showed the whole path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_key_in_its_url_path_stays_out_of_the_log() {
    common::capture_logs();
    const KEY: &str = "2c9f0b6e4d1a8f3e7b5c9d0a1e2f3b4c";
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![hello])
        .build()
        .unwrap();
    // Its tool calls fail with an error page, which is logged, naming the upstream.
    let router = error_page_on_calls(upstream, "<pre>Traceback: out of luck</pre>");
    let router = axum::Router::new().nest(&format!("/{KEY}"), router);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    let up = Upstream::http(&format!("http://{up_addr}/{KEY}/mcp?tenant=7"))
        .await
        .unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .mount("keyed", up.items().await.unwrap())
        .build()
        .unwrap();
    let addr = common::serve_in_background(gateway.http());
    let r = tokio::task::spawn_blocking(move || call_tool(addr, 1, "keyed_hello", json!({})))
        .await
        .unwrap();
    let text = tool_error_text(&r);
    assert!(text.contains("HTTP 502"), "{r}");
    let shown = format!("upstream=http://{up_addr}/…/mcp mount=keyed");
    let line = log_line_with(&["WARN", "out of luck", "mount=keyed"]).await;
    eprintln!("the log: {line}");
    assert!(line.contains(&shown), "{line}");
    let logs = common::logs();
    assert!(!logs.contains(KEY), "{logs}");
}

/// Keeps watch until it is cancelled (for the task whose status is unknown below).
#[tool(task = "optional")]
async fn watch_on(cx: mcp_runtime::Context) -> &'static str {
    cx.cancellation().cancelled().await;
    "relieved"
}

/// An upstream task whose `tasks/get` says a status no revision has: the gateway's task
/// ends saying its status is unknown, never what the status said (the log has it, naming
/// the upstream and its mount). Before, the client read up to 128 characters of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_tasks_unknown_status_reaches_the_log_not_the_client() {
    use mcp_runtime::config::{RequestState, Tasks};
    use mcp_runtime::testing::{Answers, TestClient};
    common::capture_logs();
    const SECRET: &str = "stuck on db-5.internal:5432 marker-0e7b";
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![watch_on])
        .request_state(RequestState::single_instance())
        .tasks(Tasks::default().poll_interval(Some(Duration::from_millis(20))))
        .build()
        .unwrap();
    let router = upstream
        .http()
        .into_router()
        .layer(axum::middleware::from_fn(
            |req: axum::extract::Request, next: axum::middleware::Next| async move {
                if req
                    .headers()
                    .get("mcp-method")
                    .is_none_or(|m| m != "tasks/get")
                {
                    return next.run(req).await;
                }
                let bytes = axum::body::to_bytes(req.into_body(), 1 << 20)
                    .await
                    .unwrap_or_default();
                let msg: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                let task = json!({"taskId": msg["params"]["taskId"], "status": SECRET,
                    "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
                    "ttl": null});
                let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": task});
                axum::response::IntoResponse::into_response(axum::Json(answer))
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let up = Upstream::http(&up_url).await.unwrap();
    let gateway = Server::builder("gateway", "1.0")
        .request_state(RequestState::single_instance())
        .mount("st", up.items().await.unwrap())
        .build()
        .unwrap();
    let client = TestClient::new(gateway).with_tasks();
    let done = tokio::time::timeout(
        Duration::from_secs(20),
        client.run_task("st_watch_on", json!({}), &Answers::new()),
    )
    .await
    .unwrap()
    .unwrap();
    let read = done.task.to_string();
    eprintln!("the client read: {read}");
    assert!(!read.contains("marker-0e7b"), "{read}");
    assert!(
        read.contains("the upstream task has an unknown status"),
        "{read}"
    );
    let line = log_line_with(&["WARN", SECRET, &format!("upstream={up_url} mount=st")]).await;
    eprintln!("the log: {line}");
}

/// An upstream called without a mount (through `Upstream::request`) is logged without a
/// `mount` field. Before, the log showed an empty one (`mount=`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_called_without_a_mount_is_logged_without_one() {
    common::capture_logs();
    let upstream = Server::builder("upstream", "1.0")
        .tools(tools![hello])
        .build()
        .unwrap();
    let router = error_page_on_calls(upstream, "<pre>Traceback: unmounted marker-d2a0</pre>");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let up = Upstream::http(&up_url).await.unwrap();
    let r = up
        .request("tools/call", json!({"name": "hello", "arguments": {}}))
        .await;
    assert!(r.is_err(), "{r:?}");
    let line = log_line_with(&["WARN", "marker-d2a0", &format!("upstream={up_url}")]).await;
    eprintln!("the log: {line}");
    assert!(!line.contains("mount="), "{line}");
}

/// The middleware of a mounted child is around what a followed upstream adds or changes
/// under its namespace at run time, as around what it had at build: a gate on the mount
/// (here it refuses every call, telling the name it saw) still holds for a tool the
/// upstream added later. Before, `follow` wrapped such a tool in the
/// server's own middleware only, so the gate (a rate limit, a tenant check) did not apply
/// to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounts_middleware_holds_for_what_a_followed_upstream_adds_later() {
    let child = Server::builder("child", "1.0")
        .tools(tools![steps])
        .build()
        .unwrap();
    let kid = Upstream::local(child.clone()).await.unwrap();
    let gated = kid
        .items()
        .await
        .unwrap()
        .layer(from_fn(|req: Request, _next: Next| async move {
            mcp_runtime::middleware::Response::tool_error(format!("gated: {}", req.target))
        }));
    let parent = Server::builder("parent", "1.0")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .tools(tools![hello])
        .mount("kid", gated)
        .build()
        .unwrap();
    let _following = kid.follow(&parent, "kid");
    let addr = common::serve_in_background(parent.clone().http());
    let r = call_tool(addr, 1, "kid_steps", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "gated: kid_steps", "{r}");

    child.add_tool(text_tool("late", "late but here")).unwrap();
    let has_late = |n: &[String]| n.iter().any(|n| n == "kid_late");
    let names = tool_names_once(&parent, 40, Duration::from_millis(50), has_late).await;
    assert!(has_late(&names), "{names:?}");
    let r = call_tool(addr, 2, "kid_late", json!({}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "gated: kid_late", "{r}");
    // The server's own tool is not the mount's: not gated.
    let r = call_tool(addr, 3, "hello", json!({}));
    assert_eq!(
        r["result"]["content"][0]["text"], "hello from the gateway",
        "{r}"
    );
}

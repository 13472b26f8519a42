//! `subscriptions/listen` over real HTTP and stdio: acknowledgement, filters, runtime
//! changes, resource updates, disconnects, limits and shutdown.

mod common;

use common::*;
use mcp_runtime::{Change, Server, tool, tools};
use serde_json::{Value, json};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Says hi.
#[tool]
async fn hi() -> &'static str {
    "hi"
}

/// A tool added at run time.
#[tool]
async fn plugin_tool() -> &'static str {
    "from the plugin"
}

/// A watched document.
#[mcp_runtime::resource("docs://readme")]
async fn readme() -> &'static str {
    "# Readme"
}

/// Another document.
#[mcp_runtime::resource("docs://other")]
async fn other() -> &'static str {
    "other"
}

fn start(max: usize) -> (Server, SocketAddr) {
    let server = Server::builder("listen-test", "1.0")
        .limits(mcp_runtime::config::Limits::default().max_subscriptions(max))
        .tools(tools![hi])
        .resources(mcp_runtime::resources![readme, other])
        .build()
        .unwrap();
    let addr = serve_in_background(server.clone().http().keep_alive(Duration::from_millis(200)));
    (server, addr)
}

/// Opens a `subscriptions/listen` stream.
fn open(addr: SocketAddr, id: Value, filter: Value) -> Sse {
    let body = request(id, "subscriptions/listen", json!({"notifications": filter}));
    let headers = standard_headers(&body);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    Sse::send(addr, &post_bytes(addr, body.to_string().as_bytes(), &h))
}

#[test]
fn the_ack_comes_first_with_the_honoured_subset() {
    let (_server, addr) = start(16);
    let mut s = open(
        addr,
        json!("sub-1"),
        json!({
            "toolsListChanged": true,
            "promptsListChanged": true,
            "resourceSubscriptions": ["docs://readme", "docs://missing", "docs://readme"],
            "taskIds": ["t1"]
        }),
    );
    assert!(s.buf.is_empty() || !s.buf.contains("data:"));
    let ack = s.next(Duration::from_secs(5)).expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    // No prompts here, and an unknown URI: both left out; a URI given twice is one.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["docs://readme"]})
    );
    assert!(
        s.buf
            .to_ascii_lowercase()
            .contains("content-type: text/event-stream")
    );
    assert!(s.buf.to_ascii_lowercase().contains("x-accel-buffering: no"));
    // Idle streams get keep-alive comments.
    let deadline = Instant::now() + Duration::from_secs(3);
    while !s.lines().iter().any(|l| l == ":") {
        assert!(Instant::now() < deadline, "no keep-alive");
        s.pump();
    }
}

#[test]
fn runtime_changes_reach_the_listeners_that_asked() {
    let (server, addr) = start(16);
    let mut tools_sub = open(addr, json!(7), json!({"toolsListChanged": true}));
    let mut res_sub = open(
        addr,
        json!("r"),
        json!({"resourceSubscriptions": ["docs://readme"], "resourcesListChanged": true}),
    );
    tools_sub.next(Duration::from_secs(5)).expect("ack");
    res_sub.next(Duration::from_secs(5)).expect("ack");

    server.add_tool(plugin_tool::__mcp_tool()).unwrap();
    let n = tools_sub
        .next(Duration::from_secs(5))
        .expect("tools/list_changed");
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let names: Vec<String> =
        post(addr, &request(json!(1), "tools/list", json!({}))).json()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
    assert_eq!(names, ["hi", "plugin_tool"]);
    let v = post(
        addr,
        &request(json!(2), "tools/call", json!({"name": "plugin_tool"})),
    )
    .json();
    assert_eq!(v["result"]["content"][0]["text"], "from the plugin");

    assert!(server.remove_tool("plugin_tool"));
    assert!(!server.remove_tool("plugin_tool"));
    assert_eq!(
        tools_sub.next(Duration::from_secs(5)).unwrap()["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(
        post(
            addr,
            &request(json!(3), "tools/call", json!({"name": "plugin_tool"}))
        )
        .json()["error"]["code"],
        -32602
    );

    // Resource updates go only to the subscribed URI; the tools listener hears nothing.
    server.notify_resource_updated("docs://other");
    server.notify_resource_updated("docs://readme");
    let n = res_sub.next(Duration::from_secs(5)).unwrap();
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "docs://readme");
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "r"
    );
    server.remove_resource("docs://other");
    assert_eq!(
        res_sub.next(Duration::from_secs(5)).unwrap()["method"],
        "notifications/resources/list_changed"
    );
    assert!(tools_sub.next(Duration::from_millis(300)).is_none());
}

#[test]
fn disconnects_free_the_subscription_and_the_cap_holds() {
    let (server, addr) = start(1);
    let mut first = open(addr, json!(1), json!({"toolsListChanged": true}));
    first.next(Duration::from_secs(5)).expect("ack");
    assert_eq!(server.live_subscriptions(), 1);
    // Past the cap: 503 with a JSON-RPC error.
    let second = post(
        addr,
        &request(
            json!(2),
            "subscriptions/listen",
            json!({"notifications": {}}),
        ),
    );
    assert_eq!(second.status, 503);
    assert_eq!(second.json()["error"]["code"], -32603);
    drop(first);
    // The server notices on its next write (a notification or a keep-alive).
    server.notify(Change::ToolsListChanged);
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.live_subscriptions() != 0 {
        assert!(
            Instant::now() < deadline,
            "subscription leaked after disconnect"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut third = open(addr, json!(3), json!({}));
    assert_eq!(
        third.next(Duration::from_secs(5)).unwrap()["params"]["notifications"],
        json!({})
    );
}

#[test]
fn shutdown_ends_each_stream_with_its_result() {
    let (server, addr) = start(4);
    let mut s = open(addr, json!("bye"), json!({"toolsListChanged": true}));
    s.next(Duration::from_secs(5)).expect("ack");
    server.close_subscriptions();
    let last = s.next(Duration::from_secs(5)).expect("listen result");
    assert_eq!(last["id"], "bye");
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "bye"
    );
    // Then the stream ends.
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.pump() {
        assert!(Instant::now() < deadline, "stream did not end");
    }
    let v = post(addr, &request(json!(1), "subscriptions/listen", json!({})));
    assert_eq!(
        v.json()["error"]["code"],
        -32602,
        "notifications is required"
    );
}

fn send(w: &mut impl Write, v: Value) {
    writeln!(w, "{v}").unwrap();
}

#[test]
fn several_listens_share_one_stdio_connection() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str::<Value>(&l).unwrap());
        }
    });
    let _guard = ChildGuard(child);
    let recv = || rx.recv_timeout(Duration::from_secs(5)).expect("a message");
    let listen_tools = request(
        json!("tools"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    send(&mut stdin, listen_tools.clone());
    assert_eq!(
        recv()["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "tools"
    );
    send(
        &mut stdin,
        request(
            json!("prompts"),
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true}}),
        ),
    );
    assert_eq!(
        recv()["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "prompts"
    );

    send(
        &mut stdin,
        request(
            json!(1),
            "tools/call",
            json!({"name": "test_trigger_tool_change"}),
        ),
    );
    let mut got = [recv(), recv()];
    got.sort_by_key(|v| v.get("id").is_some());
    assert_eq!(got[0]["method"], "notifications/tools/list_changed");
    assert_eq!(
        got[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "tools"
    );
    assert_eq!(got[1]["id"], 1);

    // An id in flight names no second request: a listen under it is refused, so a cancel
    // naming it stays unambiguous (before, the second listen took the first's place, and
    // the first could no longer be cancelled).
    send(&mut stdin, listen_tools);
    let refused = recv();
    assert_eq!(refused["id"], "tools", "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");

    // Cancelling one subscription stops it; the other still hears its changes.
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "tools"}}),
    );
    send(
        &mut stdin,
        request(
            json!(2),
            "tools/call",
            json!({"name": "test_trigger_tool_change"}),
        ),
    );
    assert_eq!(recv()["id"], 2);
    send(
        &mut stdin,
        request(
            json!(3),
            "tools/call",
            json!({"name": "test_trigger_prompt_change"}),
        ),
    );
    let mut got = [recv(), recv()];
    got.sort_by_key(|v| v.get("id").is_some());
    assert_eq!(got[0]["method"], "notifications/prompts/list_changed");
    assert_eq!(got[1]["id"], 3);
    // Progress never goes on a listen stream; it goes with its own request.
    let mut body = request(
        json!(4),
        "tools/call",
        json!({"name": "test_tool_with_progress"}),
    );
    body["params"]["_meta"]["progressToken"] = json!("p");
    send(&mut stdin, body);
    for _ in 0..3 {
        let v = recv();
        assert_eq!(v["params"]["progressToken"], "p");
        assert!(
            v["params"]["_meta"]
                .get("io.modelcontextprotocol/subscriptionId")
                .is_none()
        );
    }
    assert_eq!(recv()["id"], 4);
    // End of input: the remaining subscription ends with its result.
    drop(stdin);
    let last = recv();
    assert_eq!(last["id"], "prompts");
    assert_eq!(last["result"]["resultType"], "complete");
}

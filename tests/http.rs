//! Streamable HTTP over real sockets: the request rules, their order and HTTP statuses,
//! JSON vs SSE responses, progress, logging, cancellation, panics and timeouts.

mod common;

use common::*;
use mcp_runtime::protocol::{CacheHints, CacheScope, LogLevel};
use mcp_runtime::{Context, Error, Json, Logger, Progress, Server, State, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: i64,
}

/// Adds two integers, with structured output.
#[tool(
    name = "add.structured",
    title = "Structured add",
    annotations(read_only_hint = true)
)]
async fn add_structured(#[arg(description = "first")] a: i64, b: Option<i64>) -> Json<Sum> {
    Json(Sum {
        total: a + b.unwrap_or(0),
    })
}

/// Always fails.
#[tool]
async fn fails() -> Result<String, Error> {
    Err(Error::new("it went wrong"))
}

/// Panics.
#[tool]
async fn panics() -> String {
    panic!("boom")
}

static DROPPED: AtomicUsize = AtomicUsize::new(0);
static STARTED: AtomicUsize = AtomicUsize::new(0);

struct CountDrop;
impl Drop for CountDrop {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Sleeps for a long time (cancellation probe).
#[tool]
async fn sleeps(progress: Progress) -> String {
    let _guard = CountDrop;
    STARTED.fetch_add(1, Ordering::SeqCst);
    progress.report(1.0, None, Some("started"));
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke".into()
}

/// Reports progress, including values that do not increase.
#[tool]
async fn steps(progress: Progress) -> String {
    for p in [1.0, 2.0, 2.0, 1.5, 3.0] {
        progress.report(p, Some(3.0), None);
    }
    "done".into()
}

/// Logs at several levels.
#[tool]
async fn logs(log: Logger) -> String {
    log.log(LogLevel::Debug, None, "debug entry");
    log.info("info entry");
    log.warning(json!({"detail": "warning entry"}));
    "logged".into()
}

/// Reports what the request carried.
#[tool]
async fn whoami(cx: Context) -> Json<Value> {
    Json(json!({
        "id": cx.request_id().to_value(),
        "sampling": cx.client_capabilities().has("sampling"),
        "trace": cx.trace_context().map(|t| t.trace_id.clone()),
    }))
}

struct Greeting {
    text: &'static str,
}

/// Greets with shared state.
#[tool(ttl_ms = 1000, cache_scope = "private")]
async fn greet(greeting: State<Greeting>, name: String) -> String {
    format!("{} {name}", greeting.text)
}

fn addr() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let server = Server::builder("http-test", "0.0.1")
            .state(Greeting { text: "Hello" })
            .limits(
                mcp_runtime::config::Limits::default()
                    .page_size(4)
                    .request_timeout(Duration::from_secs(3)),
            )
            .tools(tools![
                add,
                add_structured,
                fails,
                panics,
                sleeps,
                steps,
                logs,
                whoami,
                greet
            ])
            .build()
            .unwrap();
        serve_in_background(server.http().allow_origin("https://app.example.com"))
    })
}

fn call(name: &str, args: Value) -> Value {
    request(
        json!(7),
        "tools/call",
        json!({"name": name, "arguments": args}),
    )
}

fn list(cursor: Option<&str>) -> Value {
    match cursor {
        Some(c) => request(json!(1), "tools/list", json!({"cursor": c})),
        None => request(json!(1), "tools/list", json!({})),
    }
}

#[test]
fn discover_tells_the_truth() {
    let r = post(addr(), &request(json!(1), "server/discover", json!({})));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v = r.json();
    let res = &v["result"];
    assert_eq!(res["resultType"], "complete");
    // Dual-era by default: the legacy revisions are served after `initialize`.
    assert_eq!(
        res["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert_eq!(
        res["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    assert_eq!(res["ttlMs"], 300000);
    assert_eq!(res["cacheScope"], "public");
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "http-test", "version": "0.0.1"})
    );
    assert!(r.header("mcp-session-id").is_none());
}

#[test]
fn missing_meta_fields_are_400_invalid_params() {
    let a = addr();
    let cases = [
        json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover"}),
        json!({"jsonrpc": "2.0", "id": 102, "method": "server/discover", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 103, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}}),
        json!({"jsonrpc": "2.0", "id": 104, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}}),
        json!({"jsonrpc": "2.0", "id": 105, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": []}}}),
    ];
    for body in cases {
        let r = post(a, &body);
        assert_eq!(r.status, 400, "{body}");
        let v = r.json();
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert_eq!(v["id"], body["id"], "the id is echoed");
    }
    // clientInfo is optional; unknown _meta keys are tolerated.
    let mut body = request(json!("x"), "server/discover", json!({}));
    body["params"]["_meta"]["com.example/extra"] = json!(1);
    assert_eq!(post(a, &body).status, 200);
}

#[test]
fn versions_are_checked_per_request() {
    let a = addr();
    let mut body = request(json!(1), "server/discover", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let r = post_with(
        a,
        &body,
        &["MCP-Protocol-Version"],
        &[("MCP-Protocol-Version", "v999.0.0")],
    );
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(
        v["error"]["data"],
        json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"], "requested": "v999.0.0"})
    );
    // Header and body disagree: -32020, not -32022.
    let r = post(a, &body);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // The next request on its own is fine: nothing is remembered.
    assert_eq!(
        post(a, &request(json!(2), "server/discover", json!({}))).status,
        200
    );
}

#[test]
fn removed_and_unknown_methods_are_404() {
    for (i, m) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
        "prompts/list",
    ]
    .iter()
    .enumerate()
    {
        let body = request(json!(300 + i), m, json!({}));
        let r = post(addr(), &body);
        assert_eq!(r.status, 404, "{m}");
        let v = r.json();
        assert_eq!(v["error"]["code"], -32601);
        assert_eq!(v["id"], json!(300 + i));
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("2026-07-28")
        );
    }
}

#[test]
fn mirrored_headers_must_match_the_body() {
    let a = addr();
    let body = list(None);
    let code = |r: Response| (r.status, r.json()["error"]["code"].clone());
    assert_eq!(
        code(post_with(a, &body, &["Mcp-Method"], &[])),
        (400, json!(-32020))
    );
    assert_eq!(
        code(post_with(
            a,
            &body,
            &["Mcp-Method"],
            &[("Mcp-Method", "prompts/list")]
        )),
        (400, json!(-32020))
    );
    assert_eq!(
        code(post_with(
            a,
            &body,
            &["Mcp-Method"],
            &[("Mcp-Method", "TOOLS/LIST")]
        )),
        (400, json!(-32020))
    );
    assert_eq!(
        code(post_with(a, &body, &[], &[("Mcp-Method", "tools/list")])),
        (400, json!(-32020)),
        "repeated"
    );
    assert_eq!(
        code(post_with(a, &body, &["MCP-Protocol-Version"], &[])),
        (400, json!(-32020))
    );
    // Header names are case-insensitive.
    assert_eq!(
        post_with(a, &body, &["Mcp-Method"], &[("MCP-METHOD", "tools/list")]).status,
        200
    );

    let body = call("add", json!({"a": 1, "b": 2}));
    assert_eq!(
        code(post_with(a, &body, &["Mcp-Name"], &[])),
        (400, json!(-32020))
    );
    assert_eq!(
        code(post_with(a, &body, &["Mcp-Name"], &[("Mcp-Name", "other")])),
        (400, json!(-32020))
    );
    assert_eq!(
        code(post_with(
            a,
            &body,
            &["Mcp-Name"],
            &[("Mcp-Name", "=?base64?YWR?=")]
        )),
        (400, json!(-32020))
    );
    assert_eq!(
        post_with(a, &body, &["Mcp-Name"], &[("Mcp-Name", "  add  ")]).status,
        200
    );
    assert_eq!(
        post_with(a, &body, &["Mcp-Name"], &[("Mcp-Name", "=?base64?YWRk?=")]).status,
        200
    );
    // A request-header error still echoes the id.
    assert_eq!(post_with(a, &body, &["Mcp-Name"], &[]).json()["id"], 7);
}

#[test]
fn envelope_errors() {
    let a = addr();
    let std = [
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", VERSION),
        ("Mcp-Method", "tools/list"),
    ];
    let send = |b: &str| raw(a, &post_bytes(a, b.as_bytes(), &std));

    let r = send("{not json");
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["error"]["code"], -32700);
    assert!(
        v.get("id").is_none(),
        "no id when it could not be read: {v}"
    );

    let r = send(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32600))
    );
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batch")
    );

    let r = send(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32700))
    );

    // JSON allows numbers no f64 holds: the message is readable but for that number, so
    // the error names its id (-32602); with the id itself out of range, there is none.
    // A 200, as other -32602s past the spec-fixed ones: a 400 without a modern code would
    // send a dual-era client back to `initialize` (ERA-03).
    let r = send(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"n":1e400}}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["id"], 8, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], -32602, "{}", r.text());
    let r = send(r#"{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}"#);
    assert_eq!(r.json()["error"]["code"], -32700, "{}", r.text());
    assert!(r.json().get("id").is_none(), "{}", r.text());

    // A response's id is one of the client's own requests: the error names none
    // (HTTP-04), so the client cannot settle that request with it.
    let r = send(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32600))
    );
    assert!(r.json().get("id").is_none(), "{}", r.text());

    let r = send(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32600))
    );

    let r = send(r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#);
    assert_eq!(r.json()["error"]["code"], -32600);

    // Notifications are accepted with 202 and no body (here without `Mcp-Method`, which
    // is optional on them; `send`'s would name another method).
    let note = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let r = raw(a, &post_bytes(a, note.as_bytes(), &std[..2]));
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
}

#[test]
fn ids_keep_their_type_and_value() {
    for id in [json!("a"), json!(0), json!(-5), json!(9007199254740993u64)] {
        let r = post(addr(), &request(id.clone(), "server/discover", json!({})));
        let text = r.text();
        assert!(text.contains(&format!("\"id\":{id}")), "{text}");
    }
}

#[test]
fn host_and_origin_are_guarded() {
    let a = addr();
    let body = request(json!(1), "server/discover", json!({})).to_string();
    let send = |host: &str, origin: Option<&str>| {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {VERSION}\r\nMcp-Method: server/discover\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(o) = origin {
            req.push_str(&format!("Origin: {o}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(&body);
        raw(a, req.as_bytes()).status
    };
    assert_eq!(
        send("evil.example.com", Some("http://evil.example.com")),
        403
    );
    assert_eq!(send("evil.example.com", None), 403);
    assert_eq!(send("localhost.evil.com:80", None), 403);
    assert_eq!(send(&a.to_string(), Some("http://evil.example.com")), 403);
    assert_eq!(send(&a.to_string(), Some("null")), 403);
    assert_eq!(send(&a.to_string(), Some(&format!("http://{a}"))), 200);
    // An Origin carries no path, not even `/`, and a port is a 16-bit number.
    assert_eq!(send(&a.to_string(), Some(&format!("http://{a}/"))), 403);
    assert_eq!(send(&a.to_string(), Some("http://localhost/")), 403);
    assert_eq!(send(&a.to_string(), Some("http://127.0.0.1:99999")), 403);
    assert_eq!(send("127.0.0.1:99999", None), 403);
    assert_eq!(
        send(
            &format!("localhost:{}", a.port()),
            Some("http://localhost:5173")
        ),
        200
    );
    assert_eq!(send(&a.to_string(), Some("https://app.example.com")), 200);
    assert_eq!(send(&a.to_string(), None), 200);
}

#[test]
fn transport_statuses() {
    let a = addr();
    let get = raw(
        a,
        format!("GET /mcp HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert_eq!(get.status, 405);
    // Without a session, GET and DELETE are not served.
    assert_eq!(get.header("allow"), Some("POST"));
    assert_eq!(get.json()["error"]["code"], -32600, "{}", get.text());
    let del = raw(
        a,
        format!("DELETE /mcp HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert_eq!(del.status, 405);
    // A notification's Mcp-Method is not required, but when sent it must match.
    let note =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    assert_eq!(post(a, &note).status, 202);
    assert_eq!(post_with(a, &note, &["Mcp-Method"], &[]).status, 202);
    let wrong = post_with(a, &note, &["Mcp-Method"], &[("Mcp-Method", "tools/list")]);
    assert_eq!(
        (wrong.status, wrong.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Any other method: Host and Origin first (403), then 405 with a JSON-RPC body.
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let other = |origin: &str| {
            let head = format!(
                "{method} /mcp HTTP/1.1\r\nHost: {a}\r\nOrigin: {origin}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            raw(a, head.as_bytes())
        };
        let evil = other("https://evil.example");
        assert_eq!(evil.status, 403, "{method}: {}", evil.text());
        assert_eq!(evil.json()["error"]["code"], -32600, "{method}");
        let fine = other(&format!("http://{a}"));
        assert_eq!(fine.status, 405, "{method}: {}", fine.text());
        assert_eq!(fine.header("allow"), Some("POST, GET, DELETE"), "{method}");
        assert_eq!(fine.json()["error"]["code"], -32600, "{method}");
    }

    let body = list(None);
    assert_eq!(
        post_with(
            a,
            &body,
            &["Content-Type"],
            &[("Content-Type", "text/plain")]
        )
        .status,
        415
    );
    assert_eq!(
        post_with(
            a,
            &body,
            &["Content-Type"],
            &[("Content-Type", "application/jsonx")]
        )
        .status,
        415
    );
    assert_eq!(
        post_with(
            a,
            &body,
            &["Content-Type"],
            &[("Content-Type", "Application/JSON; charset=utf-8")]
        )
        .status,
        200
    );
    assert_eq!(
        post_with(a, &body, &["Accept"], &[("Accept", "text/html")]).status,
        406
    );
    assert_eq!(
        post_with(a, &body, &["Accept"], &[]).status,
        200,
        "no Accept means JSON"
    );

    // Over the 4 MiB limit: 413, decided from Content-Length before the body is read.
    let huge = format!(
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n"
    );
    assert_eq!(raw(a, huge.as_bytes()).status, 413);
}

#[test]
fn tools_list_is_sorted_paged_and_stable() {
    let a = addr();
    let first = post(a, &list(None));
    let again = post(a, &list(None));
    assert_eq!(first.body, again.body, "byte-identical across calls");
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let v = post(a, &list(cursor.as_deref())).json();
        let r = &v["result"];
        assert_eq!(
            r["cacheScope"], "private",
            "greet is private, so every page is"
        );
        assert_eq!(r["ttlMs"], 1000);
        for t in r["tools"].as_array().unwrap() {
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        pages += 1;
        match r.get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), 9);

    let r = post(a, &list(Some("not-a-cursor")));
    assert_eq!(r.json()["error"]["code"], -32602);
}

#[test]
fn tool_definitions_carry_schemas_and_options() {
    let v = post(addr(), &list(None)).json();
    let tools = v["result"]["tools"].as_array().unwrap();
    let t = tools
        .iter()
        .find(|t| t["name"] == "add.structured")
        .unwrap();
    assert_eq!(t["title"], "Structured add");
    assert_eq!(
        t["description"],
        "Adds two integers, with structured output."
    );
    assert_eq!(t["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(t["inputSchema"]["required"], json!(["a"]));
    assert_eq!(t["inputSchema"]["properties"]["a"]["description"], "first");
    assert_eq!(t["outputSchema"]["properties"]["total"]["type"], "integer");
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert!(add.get("outputSchema").is_none());
    assert_eq!(add["inputSchema"]["type"], "object");
}

#[test]
fn tool_call_results() {
    let a = addr();
    let v = post(a, &call("add", json!({"a": 2, "b": 3}))).json();
    assert_eq!(
        v["result"]["content"],
        json!([{"type": "text", "text": "5"}])
    );
    assert_eq!(v["result"]["resultType"], "complete");
    assert!(v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    let v = post(a, &call("add.structured", json!({"a": 2}))).json();
    assert_eq!(v["result"]["structuredContent"], json!({"total": 2}));
    let mirrored: Value =
        serde_json::from_str(v["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(mirrored, json!({"total": 2}));

    // Invalid arguments are a tool error naming the field, not a protocol error.
    let v = post(a, &call("add", json!({"a": "two", "b": 3}))).json();
    assert_eq!(v["result"]["isError"], true);
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`a`"),
        "{v}"
    );
    let v = post(a, &call("add", json!({"a": 1}))).json();
    assert_eq!(v["result"]["isError"], true);
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"b\""),
        "{v}"
    );
    let v = post(a, &call("add", json!({"a": 1, "b": 2, "c": 3}))).json();
    assert_eq!(v["result"]["isError"], true);

    let v = post(a, &call("fails", json!({}))).json();
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(v["result"]["content"][0]["text"], "it went wrong");

    let r = post(a, &call("nope", json!({})));
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (200, json!(-32602))
    );

    let mut body = call("add", json!({}));
    body["params"]["arguments"] = json!([1, 2]);
    assert_eq!(post(a, &body).json()["error"]["code"], -32602);

    let v = post(a, &call("greet", json!({"name": "Ada"}))).json();
    assert_eq!(v["result"]["content"][0]["text"], "Hello Ada");
}

#[test]
fn a_panicking_tool_is_an_internal_error_and_the_server_keeps_serving() {
    let a = addr();
    let r = post(a, &call("panics", json!({})));
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["error"]["code"], -32603);
    assert!(
        !v["error"]["message"].as_str().unwrap().contains("boom"),
        "no panic payload leaks"
    );
    assert_eq!(
        post(a, &call("add", json!({"a": 1, "b": 1}))).json()["result"]["content"][0]["text"],
        "2"
    );
}

#[test]
fn progress_streams_as_sse_only_with_a_token() {
    let a = addr();
    let mut body = call("steps", json!({}));
    body["params"]["_meta"]["progressToken"] = json!("tok-1");
    let r = post(a, &body);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.header("x-accel-buffering"), Some("no"));
    assert!(!r.text().contains("\nid:"), "no SSE ids");
    let events = r.sse_events();
    let progress: Vec<f64> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .map(|e| {
            assert_eq!(e["params"]["progressToken"], "tok-1");
            e["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(
        progress,
        vec![1.0, 2.0, 3.0],
        "strictly increasing; the rest dropped"
    );
    let last = events.last().unwrap();
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "done");

    // Integer tokens keep their type.
    body["params"]["_meta"]["progressToken"] = json!(17);
    let events = post(a, &body).sse_events();
    assert_eq!(events[0]["params"]["progressToken"], 17);

    // Without a token: a plain JSON response.
    let r = post(a, &call("steps", json!({})));
    assert_eq!(r.header("content-type"), Some("application/json"));
    // A client that accepts only JSON never gets SSE.
    body["params"]["_meta"]["progressToken"] = json!("t");
    let r = post_with(a, &body, &["Accept"], &[("Accept", "application/json")]);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["content"][0]["text"], "done");
}

#[test]
fn log_messages_only_when_asked_and_at_the_level() {
    let a = addr();
    let r = post(a, &call("logs", json!({})));
    assert_eq!(
        r.header("content-type"),
        Some("application/json"),
        "no logLevel, no messages"
    );

    let mut body = call("logs", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let events = post(a, &body).sse_events();
    let levels: Vec<&str> = events
        .iter()
        .filter(|e| e["method"] == "notifications/message")
        .map(|e| e["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["info", "warning"]);

    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("verbose");
    let r = post(a, &body);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32602))
    );
}

#[test]
fn context_sees_this_request_only() {
    let a = addr();
    let mut body = call("whoami", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    body["params"]["_meta"]["traceparent"] =
        json!("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
    let v = post(a, &body).json();
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"id": 7, "sampling": true, "trace": "0af7651916cd43dd8448eb211c80319c"})
    );
    // The next request declares nothing: nothing carries over.
    let v = post(a, &call("whoami", json!({}))).json();
    assert_eq!(v["result"]["structuredContent"]["sampling"], false);
}

#[test]
fn closing_the_stream_cancels_the_handler() {
    use std::io::{Read, Write};
    let a = addr();
    let before = DROPPED.load(Ordering::SeqCst);
    let started = STARTED.load(Ordering::SeqCst);
    // JSON response (no progress token): disconnect while the tool sleeps.
    let body = call("sleeps", json!({})).to_string();
    let headers: Vec<(String, String)> = standard_headers(&call("sleeps", json!({})));
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut s = std::net::TcpStream::connect(a).unwrap();
    s.write_all(&post_bytes(a, body.as_bytes(), &h)).unwrap();
    while STARTED.load(Ordering::SeqCst) == started {
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(s);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while DROPPED.load(Ordering::SeqCst) == before {
        assert!(
            std::time::Instant::now() < deadline,
            "handler not dropped after disconnect (JSON)"
        );
        std::thread::sleep(Duration::from_millis(10));
    }

    // SSE response (progress token): read the first event, then disconnect.
    let before = DROPPED.load(Ordering::SeqCst);
    let mut b = call("sleeps", json!({}));
    b["params"]["_meta"]["progressToken"] = json!(1);
    let mut s = std::net::TcpStream::connect(a).unwrap();
    s.write_all(&post_bytes(a, b.to_string().as_bytes(), &h))
        .unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).contains("text/event-stream"));
    drop(s);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while DROPPED.load(Ordering::SeqCst) == before {
        assert!(
            std::time::Instant::now() < deadline,
            "handler not dropped after disconnect (SSE)"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn slow_tools_time_out_with_an_internal_error() {
    let r = post(addr(), &call("sleeps", json!({})));
    assert_eq!(r.json()["error"]["code"], -32603);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
}

#[test]
fn build_errors_are_reported_together() {
    /// Needs state.
    #[tool]
    async fn needs(s: State<Greeting>) -> String {
        s.text.into()
    }
    mod other {
        /// Adds too, under the same name.
        #[mcp_runtime::tool(name = "add")]
        pub async fn plus(a: i64, b: i64) -> String {
            (a + b).to_string()
        }
    }
    // In one `tools![..]`, the duplicate is a compile error; across lists, a build error
    // that names both functions.
    let err = Server::builder("x", "1")
        .tools(tools![needs, add])
        .tools(tools![other::plus])
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("State<"), "{text}");
    assert!(
        text.contains("two tools are named `add` (`http::add` and `http::other::plus`)"),
        "{text}"
    );
    assert_eq!(err.0.len(), 2);
}

#[test]
fn cache_hints_aggregate() {
    let h = CacheHints::new(5000, CacheScope::Public)
        .combine(CacheHints::new(100, CacheScope::Private));
    assert_eq!(h, CacheHints::new(100, CacheScope::Private));
    let _ = Arc::new(());
}

/// A server bound beyond loopback while only loopback `Host` names are allowed refuses
/// every client that names the machine otherwise: that is warned about when it starts
/// (S-1), and not once the names clients use are allowed.
#[test]
fn a_bind_beyond_loopback_with_only_loopback_hosts_is_warned_about() {
    capture_logs();
    let server = Server::builder("x", "1")
        .tools(tools![add])
        .build()
        .unwrap();
    let warned =
        |port: u16| common::logs().contains(&format!("0.0.0.0:{port} is not a loopback address"));
    let bind = || std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let (open, allowed) = (bind(), bind());
    let (p1, p2) = (
        open.local_addr().unwrap().port(),
        allowed.local_addr().unwrap().port(),
    );
    serve_on(open, server.clone().http());
    serve_on(allowed, server.http().allow_host("mcp.example"));
    // Both serve (a request through loopback is answered), so both have started.
    for port in [p1, p2] {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let r = post(addr, &request(json!(1), "tools/list", json!({})));
        assert_eq!(r.status, 200, "{}", r.text());
    }
    assert!(warned(p1), "{}", common::logs());
    assert!(!warned(p2), "{}", common::logs());
}

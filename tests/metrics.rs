//! Request metrics over real HTTP: counts by outcome, errors by code, the latency
//! histogram and the in-flight gauge, in the Prometheus text format at `GET /metrics`;
//! label values stay bounded whatever names a client sends.

mod common;

use common::{post, post_bytes, raw, request, standard_headers};
use mcp_runtime::metrics::Metrics;
use mcp_runtime::{Error, Input, Server, resource, resources, tool, tools};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Echoes.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Always fails.
#[tool]
async fn broken() -> Result<String, Error> {
    Err(Error::new("no"))
}

static SLEEPING: AtomicBool = AtomicBool::new(false);

/// Sleeps until cancelled.
#[tool]
async fn sleeps() -> String {
    SLEEPING.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "woke".into()
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Ok_ {
    /// Go on
    ok: bool,
}

/// Reports a flag whose name is a result's field.
#[tool]
async fn flags() -> mcp_runtime::Json<serde_json::Value> {
    mcp_runtime::Json(json!({"isError": true, "resultType": "input_required"}))
}

/// Asks first.
#[tool]
async fn ask(input: Input) -> Result<String, Error> {
    let a: Ok_ = input.elicit("ok", "Go on?").await?.accepted()?;
    Ok(a.ok.to_string())
}

fn metric(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name) && labels.iter().all(|x| l.contains(x)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn request_metrics_are_served_in_the_prometheus_format() {
    let metrics = Metrics::install().unwrap();
    let server = Server::builder("m", "1.0")
        .tools(tools![echo, broken, ask, sleeps, flags])
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http().metrics(metrics.clone()));
    let call = |name: &str, args: serde_json::Value| {
        let mut r = request(
            json!(1),
            "tools/call",
            json!({"name": name, "arguments": args}),
        );
        r["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"elicitation": {"form": {}}});
        post(addr, &r).json()
    };
    for _ in 0..3 {
        assert_eq!(
            call("echo", json!({"text": "x"}))["result"]["content"][0]["text"],
            "x"
        );
    }
    assert_eq!(call("broken", json!({}))["result"]["isError"], true);
    assert_eq!(
        call("flags", json!({}))["result"]["structuredContent"]["isError"],
        true
    );
    assert_eq!(
        call("ask", json!({}))["result"]["resultType"],
        "input_required"
    );
    for n in 0..5 {
        let e = call(&format!("no-such-tool-{n}"), json!({}));
        assert_eq!(e["error"]["code"], -32602, "{e}");
    }
    post(addr, &request(json!(2), "tools/list", json!({})));
    post(addr, &request(json!(3), "made/up", json!({})));
    // Refused before routing (a revision unlike its header's; an envelope that is not one):
    // counted too, under the method when it is one.
    let mut old = request(
        json!(5),
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
    );
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
    let r = post(addr, &old);
    assert_eq!(r.json()["error"]["code"], -32020, "{}", r.text());
    let r = post(addr, &json!({"jsonrpc": "2.0", "id": 6, "method": 5}));
    assert_eq!(r.json()["error"]["code"], -32600, "{}", r.text());
    // An envelope refused whose method is one of MCP: under that method (it was counted
    // under `unknown`).
    let r = post(
        addr,
        &json!({"jsonrpc": "1.0", "id": 8, "method": "prompts/list"}),
    );
    assert_eq!(r.json()["error"]["code"], -32600, "{}", r.text());
    // Refused by HTTP for its media types, before its body is read: counted too (they were
    // not), under `unknown`.
    let listed = request(json!(7), "tools/list", json!({}));
    let r = common::post_with(
        addr,
        &listed,
        &["Content-Type"],
        &[("Content-Type", "text/plain")],
    );
    assert_eq!(r.status, 415, "{}", r.text());
    let r = common::post_with(addr, &listed, &["Accept"], &[("Accept", "text/html")]);
    assert_eq!(r.status, 406, "{}", r.text());

    // A call whose client goes away before the answer: counted as cancelled.
    let mut sleeper = request(json!(4), "tools/call", json!({"name": "sleeps"}));
    sleeper["params"]["arguments"] = json!({});
    let headers = standard_headers(&sleeper);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (&**k, &**v)).collect();
    let bytes = post_bytes(addr, sleeper.to_string().as_bytes(), &headers);
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut conn, &bytes).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !SLEEPING.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(conn);
    let scrape = || {
        raw(
            addr,
            format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
    };
    // Behind the MCP endpoint's Host check: a page that rebound its name to this
    // loopback server is refused (it was served before).
    let rebound = raw(
        addr,
        format!(
            "GET /metrics HTTP/1.1\r\nHost: evil.example:{}\r\nConnection: close\r\n\r\n",
            addr.port()
        )
        .as_bytes(),
    );
    assert_eq!(rebound.status, 403, "{}", rebound.text());
    let cancelled = ["name=\"sleeps\"", "outcome=\"cancelled\""];
    while metric(&scrape().text(), "mcp_requests_total", &cancelled) != 1.0 {
        assert!(Instant::now() < deadline, "{}", scrape().text());
        std::thread::sleep(Duration::from_millis(20));
    }

    let r = scrape();
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let text = r.text();
    let ok = ["method=\"tools/call\"", "name=\"echo\"", "outcome=\"ok\""];
    assert_eq!(metric(&text, "mcp_requests_total", &ok), 3.0, "{text}");
    let err = ["name=\"broken\"", "outcome=\"tool_error\""];
    assert_eq!(metric(&text, "mcp_requests_total", &err), 1.0, "{text}");
    // Its outcome is the result's own: words in its structured content are not it (they
    // made it a tool error before).
    let flagged = ["name=\"flags\"", "outcome=\"ok\""];
    assert_eq!(metric(&text, "mcp_requests_total", &flagged), 1.0, "{text}");
    let asked = ["name=\"ask\"", "outcome=\"input_required\""];
    assert_eq!(metric(&text, "mcp_requests_total", &asked), 1.0, "{text}");
    let unknown = ["name=\"unknown\"", "outcome=\"error\""];
    assert_eq!(metric(&text, "mcp_requests_total", &unknown), 5.0, "{text}");
    assert!(
        !text.contains("no-such-tool"),
        "labels stay bounded:\n{text}"
    );
    assert_eq!(
        metric(
            &text,
            "mcp_request_errors_total",
            &["method=\"tools/call\"", "code=\"-32602\""]
        ),
        5.0
    );
    assert_eq!(
        metric(
            &text,
            "mcp_request_errors_total",
            &["method=\"unknown\"", "code=\"-32601\""]
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        metric(&text, "mcp_requests_total", &["method=\"tools/list\""]),
        1.0
    );
    let before_routing = [
        (["method=\"tools/call\"", "code=\"-32020\""], 1.0),
        (["method=\"unknown\"", "code=\"-32600\""], 3.0),
        (["method=\"prompts/list\"", "code=\"-32600\""], 1.0),
    ];
    for (labels, n) in before_routing {
        assert_eq!(
            metric(&text, "mcp_request_errors_total", &labels),
            n,
            "{text}"
        );
    }
    assert_eq!(
        metric(
            &text,
            "mcp_request_duration_seconds_count",
            &["name=\"echo\""]
        ),
        3.0,
        "{text}"
    );
    assert!(
        text.contains("mcp_request_duration_seconds_bucket{"),
        "{text}"
    );
    // Up to the default request timeout (they stopped at 30 s).
    assert!(text.contains("le=\"300\""), "{text}");
    // Nothing runs now: none in flight (it showed the last request ended, still holding
    // its slot, so an idle server never went below 1).
    assert_eq!(metric(&text, "mcp_requests_in_flight", &[]), 0.0, "{text}");

    // Refused as busy (past the in-flight cap), before the body is read: counted by
    // reason.
    let server = Server::builder("busy", "1.0")
        .tools(tools![holds])
        .limits(mcp_runtime::config::Limits::default().max_in_flight(1))
        .build()
        .unwrap();
    let busy = common::serve_in_background(server.http().metrics(metrics.clone()));
    let mut holder = request(json!(1), "tools/call", json!({"name": "holds"}));
    holder["params"]["arguments"] = json!({});
    let headers = standard_headers(&holder);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (&**k, &**v)).collect();
    let mut conn = std::net::TcpStream::connect(busy).unwrap();
    let bytes = post_bytes(busy, holder.to_string().as_bytes(), &headers);
    std::io::Write::write_all(&mut conn, &bytes).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !HOLDING.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let refused = post(busy, &request(json!(2), "tools/list", json!({})));
    assert_eq!(refused.status, 503, "{}", refused.text());
    let text = metrics.render();
    // The one holding its slot is in flight while it runs.
    assert_eq!(metric(&text, "mcp_requests_in_flight", &[]), 1.0, "{text}");
    let busy = ["reason=\"busy\""];
    assert_eq!(
        metric(&text, "mcp_requests_refused_total", &busy),
        1.0,
        "{text}"
    );
    drop(conn);
}

static HOLDING: AtomicBool = AtomicBool::new(false);

/// Holds its place until cancelled.
#[tool]
async fn holds() -> String {
    HOLDING.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "let go".into()
}

/// POSTs a message as a legacy client does (no per-request `_meta`), with `headers`.
fn post_legacy(
    addr: std::net::SocketAddr,
    body: &[u8],
    headers: &[(&str, &str)],
) -> common::Response {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    h.extend_from_slice(headers);
    raw(addr, &post_bytes(addr, body, &h))
}

/// A note, by number.
#[resource("notes://{n}")]
async fn note(n: u32) -> String {
    format!("note {n}")
}

/// The labels of a metric line for `method` and `code` (so each check of these tests
/// reads counters no other test of this binary moves).
fn errors(text: &str, method: &str, code: i64) -> (f64, f64) {
    let method = format!("method=\"{method}\"");
    let code = format!("code=\"{code}\"");
    (
        metric(text, "mcp_requests_total", &[&method, "outcome=\"error\""]),
        metric(text, "mcp_request_errors_total", &[&method, &code]),
    )
}

/// Requests of a legacy session refused before routing (their envelope, their params) are
/// counted as the modern era's are (they were not), and so are the POSTs the legacy front
/// refuses for their session or version header, and the `initialize` that opens a session;
/// a routed error counts with the code the session's revision answers.
#[test]
fn refusals_in_a_legacy_session_are_counted() {
    let metrics = Metrics::install().unwrap();
    let server = Server::builder("legacy-metrics", "1.0")
        .tools(tools![echo])
        .resources(resources![note])
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "legacy-metrics", "version": "1.0"},
    }});
    let initialized = |text: &str| {
        let ok = ["method=\"initialize\"", "outcome=\"ok\""];
        (
            metric(text, "mcp_requests_total", &ok),
            metric(text, "mcp_request_duration_seconds_count", &ok[..1]),
        )
    };
    let (opened, timed) = initialized(&metrics.render());
    let r = post_legacy(addr, init.to_string().as_bytes(), &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    // The `initialize` that opened the session is a request like any other (it was not
    // counted).
    let text = metrics.render();
    assert_eq!(initialized(&text), (opened + 1.0, timed + 1.0), "{text}");
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let send = |body: Value, headers: &[(&str, &str)]| {
        let r = post_legacy(addr, body.to_string().as_bytes(), headers);
        (r.status, r.json())
    };
    // (method, code): the counters these requests move.
    let checks = [
        ("prompts/list", -32602),
        ("resources/templates/list", -32600),
        ("resources/read", -32002),
        ("completion/complete", -32600),
        ("ping", -32600),
    ];
    let before: Vec<_> = checks
        .iter()
        .map(|(m, c)| errors(&metrics.render(), m, *c))
        .collect();

    // `params` not an object: refused before routing.
    let (status, v) = send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": [1]}),
        &in_session,
    );
    assert_eq!(v["error"]["code"], -32602, "{status} {v}");
    // An envelope that is not JSON-RPC 2.0's.
    let (status, v) = send(
        json!({"jsonrpc": "1.0", "id": 2, "method": "resources/templates/list"}),
        &in_session,
    );
    assert_eq!(v["error"]["code"], -32600, "{status} {v}");
    // Routed, and answered in the session revision's code (`-32002`, not `-32602`).
    let (status, v) = send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "docs://none"}}),
        &in_session,
    );
    assert_eq!(v["error"]["code"], -32002, "{status} {v}");
    // The legacy front's own refusals: an unknown session (404), an unknown revision (400).
    let (status, v) = send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "completion/complete", "params": {}}),
        &[
            ("Mcp-Session-Id", "nope"),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
    );
    assert_eq!((status, &v["error"]["code"]), (404, &json!(-32600)), "{v}");
    let (status, v) = send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
        &[
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
    );
    assert_eq!((status, &v["error"]["code"]), (400, &json!(-32600)), "{v}");

    let text = metrics.render();
    let uncounted: Vec<_> = checks
        .iter()
        .zip(before)
        .filter(|((method, code), (requests, errors_))| {
            errors(&text, method, *code) != (requests + 1.0, errors_ + 1.0)
        })
        .map(|(check, _)| check)
        .collect();
    assert!(uncounted.is_empty(), "not counted: {uncounted:?}\n{text}");
}

/// A POST whose body is not JSON is answered `-32700` before anything is routed: counted
/// under `unknown` (it was not).
#[test]
fn a_body_that_is_not_json_is_counted() {
    let metrics = Metrics::install().unwrap();
    let server = Server::builder("unparsable", "1.0")
        .tools(tools![echo])
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.clone().http().metrics(metrics.clone()));
    let scrape = || {
        raw(
            addr,
            format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .text()
    };
    let before = errors(&scrape(), "unknown", -32700);
    let headers = standard_headers(&request(json!(1), "tools/list", json!({})));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (&**k, &**v)).collect();
    let r = raw(
        addr,
        &post_bytes(addr, b"{\"jsonrpc\": \"2.0\", \"id\": 1,", &headers),
    );
    assert_eq!(r.json()["error"]["code"], -32700, "{}", r.text());
    let text = scrape();
    let after = errors(&text, "unknown", -32700);
    // Other tests count refusals under `unknown` too, with other codes.
    assert!(after.0 > before.0, "{text}");
    assert_eq!(after.1, before.1 + 1.0, "{text}");

    // On stdio, a line that is not JSON likewise (it was not counted).
    let rt = tokio::runtime::Runtime::new().unwrap();
    let answer = rt.block_on(async {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let (ours, theirs) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(theirs);
        let served = tokio::spawn(server.serve_io(read, write, std::future::pending()));
        let (read, mut write) = tokio::io::split(ours);
        write.write_all(b"{\"jsonrpc\": \"2.0\",\n").await.unwrap();
        let line = BufReader::new(read).lines().next_line().await.unwrap();
        served.abort();
        line.expect("an answer")
    });
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let text = metrics.render();
    let stdio = errors(&text, "unknown", -32700);
    assert!(stdio.0 > after.0, "{text}");
    assert_eq!(stdio.1, after.1 + 1.0, "{text}");
}

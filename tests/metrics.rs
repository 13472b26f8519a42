//! Request metrics over real HTTP: counts by outcome, errors by code, the latency
//! histogram and the in-flight gauge, in the Prometheus text format at `GET /metrics`;
//! label values stay bounded whatever names a client sends.

mod common;

use common::{post, post_bytes, raw, request, standard_headers};
use mcp_runtime::metrics::Metrics;
use mcp_runtime::{Error, Input, Server, tool, tools};
use serde_json::json;
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
        (["method=\"unknown\"", "code=\"-32600\""], 1.0),
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

//! The legacy era (2025-11-25, 2025-06-18, 2025-03-26) over real HTTP and stdio: sessions
//! from `initialize` to DELETE, the GET stream, requests to the client and their answers,
//! cancellation, each revision's shapes and codes, batches, caps and expiry, and the
//! modern-only setting. The same user functions serve both eras.

mod common;

use common::*;
use mcp_runtime::config::Legacy;
use mcp_runtime::{
    Content, Context, Error, Form, Input, Json, Logger, Server, State, resource, resources, tool,
    tools,
};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Name {
    /// Your name
    name: String,
}

/// Greets someone it asks for.
#[tool]
async fn greet(input: Input) -> Result<String, Error> {
    let who: Name = input.elicit("who", "Who are you?").await?.accepted()?;
    Ok(format!("Hello, {}!", who.name))
}

/// Set when `impatient` may end.
static IMPATIENT_MAY_END: AtomicBool = AtomicBool::new(false);

/// Asks who is there, but waits only 300 ms for the answer; then works on until
/// `IMPATIENT_MAY_END` (10 s at most).
#[tool]
async fn impatient(input: Input) -> Result<String, Error> {
    let asked = input.elicit::<Name>("who", "Who's there?");
    if let Ok(answer) = tokio::time::timeout(Duration::from_millis(300), asked).await {
        return Ok(format!("hello {}", answer?.accepted()?.name));
    }
    for _ in 0..1000 {
        if IMPATIENT_MAY_END.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok("nobody answered".into())
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Total {
    sum: i64,
}

/// Adds two numbers, with structured output.
#[tool(title = "Adder")]
async fn add(a: i64, b: i64) -> Json<Total> {
    Json(Total { sum: a + b })
}

/// Links to a document.
#[tool]
async fn link() -> Vec<Content> {
    vec![Content::resource_link("docs://readme", "readme")]
}

/// Needs the client's sampling capability.
#[tool]
async fn needs_sampling(cx: Context) -> Result<&'static str, Error> {
    cx.require_capability("sampling")?;
    Ok("sampled")
}

/// Logs that it started, then waits until cancelled (a minute at most).
#[tool]
async fn wait(cx: Context, log: Logger, seen: State<Arc<AtomicBool>>) -> &'static str {
    log.info("started");
    let token = cx.cancellation();
    tokio::select! {
        () = token.cancelled() => {
            seen.store(true, Ordering::SeqCst);
            "cancelled"
        }
        () = tokio::time::sleep(Duration::from_secs(60)) => "done",
    }
}

/// Set when `nap` wakes up.
static NAPPED: AtomicBool = AtomicBool::new(false);

/// Logs that it started, then sleeps a second without looking at its cancellation.
#[tool]
async fn nap(log: Logger) -> &'static str {
    log.info("napping");
    tokio::time::sleep(Duration::from_secs(1)).await;
    NAPPED.store(true, Ordering::SeqCst);
    "rested"
}

/// Sends the user to a page to approve (URL-mode elicitation, from 2025-11-25).
#[tool]
async fn approve(input: Input) -> Result<String, Error> {
    let answer = input
        .elicit_url("ok", "Approve the deploy", "https://example.com/approve")
        .await?;
    Ok(format!("{answer:?}"))
}

/// Set while `doze` runs.
static DOZING: AtomicBool = AtomicBool::new(false);

/// Sleeps a minute without a word (no log, no progress), so its answer would be JSON.
#[tool]
async fn doze() -> &'static str {
    DOZING.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "awake"
}

/// The readme.
#[resource("docs://readme", mime_type = "text/markdown")]
async fn readme() -> &'static str {
    "# Readme"
}

/// A note, by number.
#[resource("notes://{n}")]
async fn note(n: u32) -> String {
    format!("note {n}")
}

fn server(legacy: Legacy, seen: Arc<AtomicBool>) -> Server {
    Server::builder("legacy-test", "1.0")
        .title("Legacy test")
        .tools(tools![
            greet,
            add,
            link,
            needs_sampling,
            wait,
            nap,
            doze,
            approve,
            impatient
        ])
        .resources(resources![readme, note])
        .state(seen)
        .legacy(legacy)
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap()
}

fn start() -> SocketAddr {
    serve_in_background(server(Legacy::default(), Arc::default()).http())
}

/// A legacy client over HTTP: no per-request `_meta`, the session id and negotiated
/// version as headers after `initialize`.
#[derive(Clone)]
struct Client {
    addr: SocketAddr,
    session: String,
    version: String,
    next: u64,
}

fn initialize_body(version: &str, caps: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": caps,
        "clientInfo": {"name": "raw-legacy", "version": "1.0"},
    }})
}

/// POSTs a legacy message with these headers (JSON and SSE accepted).
fn post_legacy(addr: SocketAddr, body: &Value, headers: &[(&str, &str)]) -> Response {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Connection", "close"),
    ];
    h.extend_from_slice(headers);
    raw(addr, &post_bytes(addr, body.to_string().as_bytes(), &h))
}

impl Client {
    fn open(addr: SocketAddr, version: &str) -> (Client, Value) {
        let caps = json!({"elicitation": {}, "roots": {}});
        let r = post_legacy(addr, &initialize_body(version, caps), &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        let session = r.header("mcp-session-id").expect("a session id").to_owned();
        let result = r.json()["result"].clone();
        let version = result["protocolVersion"].as_str().unwrap().to_owned();
        let c = Client {
            addr,
            session,
            version,
            next: 1,
        };
        let r = c.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(r.status, 202);
        (c, result)
    }

    fn headers(&self) -> [(&str, &str); 2] {
        [
            ("Mcp-Session-Id", self.session.as_str()),
            ("MCP-Protocol-Version", self.version.as_str()),
        ]
    }

    fn post(&self, body: &Value) -> Response {
        post_legacy(self.addr, body, &self.headers())
    }

    /// Posts `body` in the session, taking JSON or SSE, and reads the answer as a stream.
    fn stream(&self, body: &Value) -> Sse {
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        h.extend_from_slice(&self.headers());
        Sse::send(
            self.addr,
            &post_bytes(self.addr, body.to_string().as_bytes(), &h),
        )
    }

    /// Calls tool `name` (request `id`) in the session, taking its answer as a stream,
    /// and reads that stream up to the handler's question: an `elicitation/create`
    /// request to the client. The stream, and the question.
    fn elicited(&self, id: u64, name: &str) -> (Sse, Value) {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}});
        let mut sse = self.stream(&call);
        let ask = sse
            .next(Duration::from_secs(5))
            .expect("a request to the client");
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        (sse, ask)
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let r = self.post(&body);
        let v = if r.header("content-type") == Some("text/event-stream") {
            r.sse_events().pop().unwrap()
        } else {
            r.json()
        };
        assert_eq!(v["id"], self.next, "{v}");
        v
    }
}

#[test]
fn a_session_lives_from_initialize_to_delete() {
    let addr = start();
    let (mut c, init) = Client::open(addr, "2025-11-25");
    assert_eq!(c.version, "2025-11-25");
    assert_eq!(c.session.len(), 32);
    assert!(c.session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    assert!(init.get("resultType").is_none(), "{init}");
    assert_eq!(init["capabilities"]["tools"], json!({"listChanged": true}));
    assert_eq!(
        init["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert_eq!(init["capabilities"]["logging"], json!({}));
    assert_eq!(
        init["serverInfo"],
        json!({"name": "legacy-test", "version": "1.0", "title": "Legacy test"})
    );

    // Results in the legacy shape: no resultType, caching hints or serverInfo _meta.
    let list = c.call("tools/list", json!({}));
    let result = &list["result"];
    for absent in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(result.get(absent).is_none(), "{absent}: {result}");
    }
    assert_eq!(result["tools"].as_array().unwrap().len(), 9);
    assert_eq!(c.call("ping", json!({}))["result"], json!({}));
    assert_eq!(
        c.call("logging/setLevel", json!({"level": "info"}))["result"],
        json!({})
    );
    assert_eq!(
        c.call("logging/setLevel", json!({"level": "loud"}))["error"]["code"],
        -32602
    );
    assert_eq!(
        c.call("resources/subscribe", json!({"uri": "docs://readme"}))["result"],
        json!({})
    );
    assert_eq!(
        c.call("initialize", json!({"protocolVersion": "2025-11-25"}))["error"]["code"],
        -32600
    );
    // What only 2026-07-28 has is not served in a session.
    for m in ["server/discover", "subscriptions/listen", "tasks/get"] {
        assert_eq!(c.call(m, json!({}))["error"]["code"], -32601, "{m}");
    }
    // A resource nothing serves: the legacy code, -32002, with the URI.
    let missing = c.call("resources/read", json!({"uri": "docs://nothing"}));
    assert_eq!(missing["error"]["code"], -32002);
    assert_eq!(missing["error"]["data"]["uri"], "docs://nothing");
    // No -32021 in the legacy era: a missing capability is a tool error.
    let r = c.call(
        "tools/call",
        json!({"name": "needs_sampling", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    // A modern request on the same endpoint, meanwhile, is stateless as ever.
    let modern = post(addr, &request(json!(1), "server/discover", json!({})));
    assert_eq!(modern.json()["result"]["resultType"], "complete");

    // Without the session header (but a legacy version): 400; an unknown session: 404.
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
    let r = post_legacy(addr, &body, &[("MCP-Protocol-Version", "2025-11-25")]);
    assert_eq!(r.status, 400);
    let r = post_legacy(
        addr,
        &body,
        &[
            ("Mcp-Session-Id", "nope"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_eq!(r.status, 404);
    let r = post_legacy(
        addr,
        &body,
        &[
            ("Mcp-Session-Id", &c.session),
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
    );
    assert_eq!(r.status, 400);

    // HEAD (which axum routes with GET) neither streams nor ends it.
    let h = c.headers();
    let bodiless = |method: &str| {
        let head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n{}: {}\r\nConnection: close\r\n\r\n",
            h[0].0, h[0].1
        );
        raw(addr, head.as_bytes())
    };
    assert_eq!(bodiless("HEAD").status, 405);
    assert_eq!(c.post(&body).status, 200);

    // DELETE ends it; the id is unknown afterwards.
    let delete = bodiless("DELETE");
    assert_eq!(delete.status, 200);
    assert_eq!(c.post(&body).status, 404);
}

/// The GET stream carries what is not tied to a request; one per session at a time: a
/// second GET (a client that lost the first on a half-open connection) takes its place,
/// and the first ends.
#[test]
fn the_get_stream_carries_changes_and_one_stream_at_a_time() {
    let s = server(Legacy::default(), Arc::default());
    let addr = serve_in_background(s.clone().http().keep_alive(Duration::from_millis(200)));
    let (mut c, _) = Client::open(addr, "2025-11-25");
    c.call("resources/subscribe", json!({"uri": "docs://readme"}));
    let mut lost = open_stream(addr, &c);
    let mut stream = open_stream(addr, &c);
    // The first one's body ends (its last chunk).
    let ended = Instant::now();
    while !lost.buf.ends_with("\r\n0\r\n\r\n") {
        assert!(
            ended.elapsed() < Duration::from_secs(5),
            "the first stream goes on: {}",
            lost.buf
        );
        if !lost.pump() {
            break;
        }
    }
    s.notify(mcp_runtime::Change::ResourceUpdated("docs://readme".into()));
    s.notify(mcp_runtime::Change::ToolsListChanged);
    let first = stream.next(Duration::from_secs(5)).expect("an update");
    assert_eq!(first["method"], "notifications/resources/updated");
    assert_eq!(first["params"]["uri"], "docs://readme");
    let next = stream.next(Duration::from_secs(5)).expect("a list change");
    assert_eq!(next["method"], "notifications/tools/list_changed");
    // Without a session, GET is not served (the modern era has no GET).
    let r = raw(
        addr,
        format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert_eq!(r.status, 405);
}

/// A refusal of the legacy front: `status`, `application/json` and a JSON-RPC error
/// without an id (a GET or DELETE carries no message), as every refusal of the endpoint
/// is. Returns the error's message.
fn json_rpc_refusal(r: &Response, status: u16) -> String {
    assert_eq!(r.status, status, "{}", r.text());
    assert_eq!(
        r.header("content-type"),
        Some("application/json"),
        "{}",
        r.text()
    );
    let v = r.json();
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert!(v.get("id").is_none(), "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    v["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("a message: {v}"))
        .to_owned()
}

/// GET and DELETE refused on a session (an ended session, an `Accept` without SSE) answer a JSON-RPC error body, as the POSTs of an ended session do.
#[test]
fn get_and_delete_refusals_carry_json_rpc_errors() {
    let addr = start();
    let (c, _) = Client::open(addr, "2025-11-25");
    let req = |method: &str, accept: &str| {
        format!(
            "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: {}\r\nConnection: close\r\n\r\n",
            c.session, c.version
        )
    };
    let mut stream = Sse::send(addr, req("GET", "text/event-stream").as_bytes());
    while !stream.buf.contains("\r\n\r\n") {
        assert!(stream.pump());
    }
    assert!(stream.buf.starts_with("HTTP/1.1 200"), "{}", stream.buf);
    // A GET that does not take SSE: 406.
    let json_only = raw(addr, req("GET", "application/json").as_bytes());
    let message = json_rpc_refusal(&json_only, 406);
    assert!(message.contains("text/event-stream"), "{message}");

    // DELETE ends the session (and its stream).
    let delete = raw(addr, req("DELETE", "*/*").as_bytes());
    assert_eq!(delete.status, 200, "{}", delete.text());
    drop(stream);
    // Then a GET, a second DELETE and a POST all find it unknown: 404, the same error
    // (the POST's with its id).
    let get = json_rpc_refusal(&raw(addr, req("GET", "text/event-stream").as_bytes()), 404);
    assert!(get.contains("unknown or expired session"), "{get}");
    let again = json_rpc_refusal(&raw(addr, req("DELETE", "*/*").as_bytes()), 404);
    assert_eq!(again, get);
    let post = c.post(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    assert_eq!(post.status, 404, "{}", post.text());
    let post = post.json();
    assert_eq!(post["id"], 4, "{post}");
    assert_eq!(post["error"]["message"], get.as_str(), "{post}");
}

#[test]
fn an_elicitation_is_a_request_to_the_client_answered_by_a_post() {
    let addr = start();
    let (c, _) = Client::open(addr, "2025-11-25");
    let (mut sse, ask) = c.elicited(7, "greet");
    assert_eq!(ask["params"]["message"], "Who are you?");
    assert!(ask["params"].get("mode").is_some(), "2025-11-25 has modes");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(c.post(&answer).status, 202);
    let done = sse.next(Duration::from_secs(5)).expect("the result");
    assert_eq!(done["id"], 7);
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
    assert!(done["result"].get("resultType").is_none());
}

/// At the cap on requests in flight, the client's answer to a question a handler waits on
/// is still let in (it frees the cap; refused, the handler held its slot until its
/// timeout), and so is a cancellation; a new request is not.
#[test]
fn an_answer_is_let_in_at_the_cap_on_requests_in_flight() {
    let server = Server::builder("capped", "1.0")
        .tools(tools![greet, doze])
        .limits(mcp_runtime::config::Limits::default().max_in_flight(1))
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    let addr = serve_in_background(server.http());
    let (c, _) = Client::open(addr, "2025-11-25");
    let (mut sse, ask) = c.elicited(7, "greet");
    // The cap is taken by the call: a second request is refused.
    let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"});
    assert_eq!(c.post(&ping).status, 503);
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(c.post(&answer).status, 202);
    let done = sse.next(Duration::from_secs(5)).expect("the result");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
    // A call that holds the cap, cancelled at the cap (once the first call's slot is
    // back: it goes with the end of its response).
    let start = Instant::now();
    while c.post(&ping).status != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the call kept the cap"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let doze = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "doze", "arguments": {}}});
    // Sent again if it came while the last ping still held the cap (its slot goes a
    // moment after its response): a refusal is at once, a running call says nothing.
    let mut dozing = loop {
        let mut dozing = c.stream(&doze);
        for _ in 0..3 {
            dozing.pump();
        }
        if !dozing.buf.starts_with("HTTP/1.1 503") {
            break dozing;
        }
    };
    let start = Instant::now();
    while c.post(&ping).status != 503 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "doze never held the cap"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}});
    assert_eq!(c.post(&cancel).status, 202);
    while dozing.pump() {}
    let start = Instant::now();
    while c.post(&ping).status != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the cancelled call kept the cap"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A question the handler stops waiting for (a timeout around it) is cancelled at the
/// client then, while the handler works on: `notifications/cancelled` naming the request
/// to the client, on the call's stream. It came only when the call ended, so the client
/// showed a form nobody waited on for as long as the handler ran.
#[test]
fn a_question_the_handler_stops_waiting_for_is_cancelled_at_the_client() {
    let addr = start();
    let (c, _) = Client::open(addr, "2025-11-25");
    let (mut sse, ask) = c.elicited(9, "impatient");
    // The handler waits for the flag for 10 s: the cancellation comes before that.
    let cancelled = sse
        .next(Duration::from_secs(3))
        .expect("its cancellation, while the handler works on");
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    assert_eq!(cancelled["params"]["requestId"], ask["id"], "{cancelled}");
    IMPATIENT_MAY_END.store(true, Ordering::SeqCst);
    let done = sse.next(Duration::from_secs(5)).expect("the result");
    assert_eq!(done["id"], 9, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "nobody answered");
}

/// An answer that is not valid is asked again with the reason, but not forever: a client
/// that answers wrongly at once would be asked as fast as it answers until the request
/// timed out. At the round cap (10 by default) the question fails, and the tool with it.
#[test]
fn invalid_answers_are_asked_again_up_to_the_cap() {
    let addr = start();
    let (c, _) = Client::open(addr, "2025-11-25");
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "greet", "arguments": {}}});
    let mut sse = c.stream(&call);
    let mut asks = 0;
    let done = loop {
        let m = sse.next(Duration::from_secs(5)).expect("a message");
        if m["id"] == 8 && m.get("method").is_none() {
            break m;
        }
        assert_eq!(m["method"], "elicitation/create", "{m}");
        if asks > 0 {
            let message = m["params"]["message"].as_str().unwrap();
            assert!(
                message.starts_with("The previous answer was not valid"),
                "{m}"
            );
        }
        asks += 1;
        assert!(asks <= 10, "asked {asks} times");
        let answer = json!({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "maybe"}});
        assert_eq!(c.post(&answer).status, 202);
    };
    assert_eq!(asks, 10);
    assert_eq!(done["result"]["isError"], true, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("the client's answers were not valid 10 times"),
        "{text}"
    );
}

/// URL-mode elicitation exists from 2025-11-25: a 2025-06-18 session that declares
/// `elicitation.url` anyway is not sent one (it would read as a form without its
/// schema); the tool fails naming the capability, as for any capability a session lacks.
#[test]
fn url_elicitation_needs_2025_11_25() {
    let addr = start();
    let caps = json!({"elicitation": {"form": {}, "url": {}}});
    for (version, asked) in [("2025-06-18", false), ("2025-11-25", true)] {
        let r = post_legacy(addr, &initialize_body(version, caps.clone()), &[]);
        let session = r.header("mcp-session-id").unwrap().to_owned();
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", version),
        ];
        let init = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post_legacy(addr, &init, &h[2..]).status, 202);
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "approve", "arguments": {}}});
        if asked {
            h.push(("Connection", "close"));
            let mut sse = Sse::send(addr, &post_bytes(addr, call.to_string().as_bytes(), &h));
            let first = sse.next(Duration::from_secs(5)).expect("a message");
            assert_eq!(first["method"], "elicitation/create", "{first}");
            assert_eq!(first["params"]["mode"], "url", "{first}");
        } else {
            // Refused before anything is asked: a JSON answer.
            let r = post_legacy(addr, &call, &h[2..]).json();
            assert_eq!(r["id"], 1, "{r}");
            assert_eq!(r["result"]["isError"], true, "{r}");
            let text = r["result"]["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("elicitation.url"), "{text}");
        }
    }
}

/// In a session an HTTP 404 means the session is gone (the client initializes again), so
/// a method the server does not serve is a `-32601` with 200, and the session lives on.
#[test]
fn an_unknown_method_in_a_session_is_200_not_404() {
    let addr = start();
    let (mut c, _) = Client::open(addr, "2025-11-25");
    c.next += 1;
    let body = json!({"jsonrpc": "2.0", "id": c.next, "method": "prompts/list"});
    let r = c.post(&body);
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["code"], -32601, "{v}");
    assert_eq!(
        v["error"]["message"], "Method not found: prompts/list",
        "{v}"
    );
    assert_eq!(c.call("ping", json!({}))["result"], json!({}));
}

#[test]
fn notifications_cancelled_stops_a_request_and_a_closed_stream_does_not() {
    let seen = Arc::new(AtomicBool::new(false));
    let addr = serve_in_background(server(Legacy::default(), Arc::clone(&seen)).http());
    let (c, _) = Client::open(addr, "2025-11-25");
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "wait", "arguments": {}}});
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    h.extend_from_slice(&c.headers());
    // The request runs (its log message arrives), then the client goes away: in these
    // revisions that is not a cancellation.
    let mut stream = Sse::send(addr, &post_bytes(addr, call.to_string().as_bytes(), &h));
    let started = stream
        .next(Duration::from_secs(5))
        .expect("the log message");
    assert_eq!(started["method"], "notifications/message");
    drop(stream);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !seen.load(Ordering::SeqCst),
        "a closed stream cancelled the request"
    );
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}});
    assert_eq!(c.post(&cancel).status, 202);
    for _ in 0..100 {
        if seen.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        seen.load(Ordering::SeqCst),
        "notifications/cancelled cancelled it"
    );
}

/// `notifications/cancelled` stops a request even when its handler does not look at its
/// cancellation (the handler is dropped), and nothing answers it: its SSE stream ends
/// with no response.
#[test]
fn a_cancelled_request_is_dropped_and_not_answered() {
    let addr = start();
    let (c, _) = Client::open(addr, "2025-11-25");
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    h.extend_from_slice(&c.headers());
    // Calls `tool` as request `id` on its own stream, sees its log message `log`, checks
    // `during` while it runs, cancels it, and waits `quiet` for an answer that must not
    // come: the stream ends without one.
    let cancelled = |id: u64, tool: &str, log: &str, quiet: Duration, during: &dyn Fn(&Value)| {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
        let mut stream = Sse::send(addr, &post_bytes(addr, call.to_string().as_bytes(), &h));
        let started = stream
            .next(Duration::from_secs(5))
            .expect("the log message");
        assert_eq!(started["params"]["data"], log, "{started}");
        during(&call);
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
        assert_eq!(c.post(&cancel).status, 202);
        assert_eq!(stream.next(quiet), None, "{}", stream.buf);
        assert!(
            !stream.buf.contains(&format!("\"id\":{id}")),
            "{}",
            stream.buf
        );
        assert!(
            stream.buf.contains("\r\n0\r\n\r\n"),
            "the stream ended: {}",
            stream.buf
        );
    };
    // The nap would have ended after a second.
    cancelled(21, "nap", "napping", Duration::from_millis(1800), &|_| {});
    assert!(!NAPPED.load(Ordering::SeqCst), "the handler ran on");
    // A handler that answers its cancellation ("cancelled") is not answered either; while
    // it runs, its id names no other request.
    cancelled(22, "wait", "started", Duration::from_millis(800), &|call| {
        let again = c.post(call).json();
        assert_eq!(again["id"], 22, "{again}");
        assert_eq!(again["error"]["code"], -32600, "{again}");
    });
}

/// A cancelled request whose handler had sent nothing yet is still answered as a request
/// (a POST that carries one gets JSON or SSE, never a bare 202): an SSE stream that ends
/// with no response. Only a client that takes no SSE gets the bodiless 202.
#[test]
fn a_cancelled_silent_request_gets_an_empty_stream() {
    let addr = start();
    let (c, _) = Client::open(addr, "2025-11-25");
    for (id, accept) in [
        (31, "application/json, text/event-stream"),
        (32, "application/json"),
    ] {
        DOZING.store(false, Ordering::SeqCst);
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", accept),
            ("Connection", "close"),
        ];
        h.extend_from_slice(&c.headers());
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "doze", "arguments": {}}});
        let bytes = post_bytes(addr, call.to_string().as_bytes(), &h);
        let pending = std::thread::spawn(move || raw(addr, &bytes));
        let started = std::time::Instant::now();
        while !DOZING.load(Ordering::SeqCst) {
            assert!(started.elapsed() < Duration::from_secs(5), "doze never ran");
            std::thread::sleep(Duration::from_millis(5));
        }
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
        assert_eq!(c.post(&cancel).status, 202);
        let r = pending.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10), "it ran on");
        if accept.contains("event-stream") {
            assert_eq!(r.status, 200, "{}", r.text());
            assert_eq!(r.header("content-type"), Some("text/event-stream"));
            assert_eq!(r.sse_events(), Vec::<Value>::new(), "{}", r.text());
        } else {
            assert_eq!(r.status, 202, "{}", r.text());
            assert_eq!(r.text(), "");
        }
    }
}

#[test]
fn each_revision_gets_its_own_shapes() {
    let addr = start();
    let tool = |c: &mut Client, name: &str| {
        c.call("tools/list", json!({}))["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    // 2025-03-26: no titles, outputSchema, structuredContent or resource links.
    let (mut old, init) = Client::open(addr, "2025-03-26");
    assert_eq!(old.version, "2025-03-26");
    assert!(init["serverInfo"].get("title").is_none());
    let adder = tool(&mut old, "add");
    assert!(
        adder.get("title").is_none() && adder.get("outputSchema").is_none(),
        "{adder}"
    );
    let sum = old.call(
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    assert!(sum["result"].get("structuredContent").is_none(), "{sum}");
    assert_eq!(sum["result"]["content"][0]["text"], r#"{"sum":5}"#);
    let l = old.call("tools/call", json!({"name": "link", "arguments": {}}));
    assert_eq!(
        l["result"]["content"][0],
        json!({"type": "text", "text": "readme: docs://readme"})
    );
    // No elicitation before 2025-06-18: the tool fails as a tool.
    let g = old.call("tools/call", json!({"name": "greet", "arguments": {}}));
    assert_eq!(g["result"]["isError"], true, "{g}");

    // 2025-06-18: titles, outputSchema and structuredContent; links stay links.
    let (mut mid, _) = Client::open(addr, "2025-06-18");
    let adder = tool(&mut mid, "add");
    assert_eq!(adder["title"], "Adder");
    assert!(adder.get("outputSchema").is_some());
    let sum = mid.call(
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    assert_eq!(sum["result"]["structuredContent"], json!({"sum": 5}));
    let l = mid.call("tools/call", json!({"name": "link", "arguments": {}}));
    assert_eq!(l["result"]["content"][0]["type"], "resource_link");

    // A revision not served is answered with the newest legacy one.
    let (c, _) = Client::open(addr, "2024-11-05");
    assert_eq!(c.version, "2025-11-25");
}

#[test]
fn batches_are_2025_03_26_only() {
    let addr = start();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}},
    ]);
    let (old, _) = Client::open(addr, "2025-03-26");
    let answers = old.post(&batch).json();
    let answers = answers.as_array().expect("an array of responses");
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(answers[1]["result"]["content"][0]["text"], r#"{"sum":2}"#);
    // Refused with 400, as the modern path refuses the same input; an empty batch too.
    let (new, _) = Client::open(addr, "2025-11-25");
    let refused = new.post(&batch);
    assert_eq!(refused.status, 400, "{}", refused.text());
    assert_eq!(
        refused.json()["error"]["code"],
        -32600,
        "{}",
        refused.text()
    );
    let empty = old.post(&json!([]));
    assert_eq!(empty.status, 400, "{}", empty.text());
    // A batch whose one request is cancelled in the same batch: no answer, but a POST
    // that carried a request is answered with a stream (that ends), not a bare 202.
    let doze = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "doze", "arguments": {}}});
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}});
    let r = old.post(&json!([doze, cancel]));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert!(r.sse_events().is_empty(), "{}", r.text());
}

/// A legacy handler outlives its closed connection (that is no cancellation in these
/// revisions) and keeps its unit of the in-flight cap until it ends; each call of a
/// 2025-03-26 batch takes a unit of its own.
#[test]
fn legacy_handlers_and_batched_calls_count_against_the_in_flight_cap() {
    let server = Server::builder("capped", "1.0")
        .tools(tools![add, wait])
        .state(Arc::new(AtomicBool::new(false)))
        .limits(mcp_runtime::config::Limits::default().max_in_flight(2))
        .build()
        .unwrap();
    let addr = serve_in_background(server.http());
    let (c, _) = Client::open(addr, "2025-03-26");
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    h.extend_from_slice(&c.headers());
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "wait", "arguments": {}}});
    let mut stream = Sse::send(addr, &post_bytes(addr, call.to_string().as_bytes(), &h));
    assert!(stream.next(Duration::from_secs(5)).is_some(), "it started");
    drop(stream);
    std::thread::sleep(Duration::from_millis(200));
    let add = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}});
    // `wait` still holds one unit: of the batch's two calls, one runs and one is refused.
    let answers = c.post(&json!([add(1), add(2)])).json();
    // JSON-RPC leaves the order of a batch's answers open.
    let by_id = |id: u64| {
        let all = answers.as_array().expect("the batch's answers");
        all.iter()
            .find(|a| a["id"] == id)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        by_id(1)["result"]["content"][0]["text"],
        r#"{"sum":2}"#,
        "{answers}"
    );
    assert_eq!(by_id(2)["error"]["code"], -32603, "{answers}");
    let message = by_id(2)["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("Too many requests in flight"), "{answers}");
    // Cancelled, `wait` lets go of its unit.
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}});
    assert_eq!(c.post(&cancel).status, 202);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let answers = c.post(&json!([add(3), add(4)])).json();
        if answers
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a.get("result").is_some())
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{answers}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `wait` called with id `id`, padded with an unknown `_meta` key to about `size` bytes.
fn padded_wait(id: u64, size: usize) -> Value {
    let mut call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "wait", "arguments": {}, "_meta": {"com.example/pad": ""}}});
    let pad = size.saturating_sub(call.to_string().len());
    call["params"]["_meta"]["com.example/pad"] = json!("x".repeat(pad));
    call
}

/// A 2025-03-26 batch holds its bytes against the request bytes in flight until all its
/// calls are answered (its JSON is in memory until then), over HTTP and on stdio.
#[test]
fn a_batch_holds_its_bytes_until_it_is_answered() {
    let server = || {
        Server::builder("capped", "1.0")
            .tools(tools![add, wait])
            .state(Arc::new(AtomicBool::new(false)))
            .limits(mcp_runtime::config::Limits::default().max_request_bytes_in_flight(2000))
            .build()
            .unwrap()
    };
    let addr = serve_in_background(server().http());
    let (c, _) = Client::open(addr, "2025-03-26");
    let batch = json!([padded_wait(11, 1500)]);
    let held = {
        let c = c.clone();
        std::thread::spawn(move || c.post(&batch))
    };
    std::thread::sleep(Duration::from_millis(300));
    let other = json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}, "_meta": {"com.example/pad": "x".repeat(500)}}});
    let r = c.post(&other);
    assert_eq!(r.status, 503, "the batch's bytes are held: {}", r.text());
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}});
    assert_eq!(c.post(&cancel).status, 202);
    held.join().unwrap();
    assert_eq!(
        c.post(&other).status,
        200,
        "given back once it was answered"
    );

    // stdio: the same.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use tokio::io::AsyncWriteExt;
        let (mut lines, mut w) = stdio_pair(server());
        let mut send = async |v: Value| w.write_all(format!("{v}\n").as_bytes()).await.unwrap();
        send(initialize_body("2025-03-26", json!({}))).await;
        lines.next_line().await.unwrap().unwrap();
        send(json!([padded_wait(11, 1500)])).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        send(other.clone()).await;
        // Answers only (`wait` logs that it started).
        let mut answer = async || loop {
            let line = lines.next_line().await.unwrap().unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id").is_some() {
                return v;
            }
        };
        let refused = answer().await;
        assert_eq!(refused["id"], 12, "{refused}");
        assert_eq!(refused["error"]["code"], -32603, "{refused}");
        send(cancel.clone()).await;
        // The cancelled call leaves the batch's answer empty (none is written): once the
        // batch has ended, `add` is served (busy is "try again later").
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            send(other.clone()).await;
            let answered = answer().await;
            assert_eq!(answered["id"], 12, "{answered}");
            if answered["result"].is_object() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{answered}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// Runs only as a task.
#[tool(task = "required")]
async fn exported() -> &'static str {
    "exported"
}

/// A tool that runs only as a task needs a 2026-07-28 extension a legacy session cannot
/// declare: like any capability a session lacks, that is the tool's error (`isError`,
/// status 200), since the legacy revisions have no `-32021` (and a `-32603` would call the
/// client's limit a failure of the server). A modern request without the extension still
/// gets `-32021`.
#[test]
fn a_task_only_tool_is_a_tool_error_in_a_legacy_session() {
    let server = Server::builder("tasks-only", "1.0")
        .tools(tools![exported])
        .build()
        .unwrap();
    let addr = serve_in_background(server.http());
    for version in ["2025-11-25", "2025-03-26"] {
        let (c, _) = Client::open(addr, version);
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "exported", "arguments": {}}});
        let r = c.post(&body);
        assert_eq!(r.status, 200, "{version}: {}", r.text());
        let v = r.json();
        assert!(v.get("error").is_none(), "{version}: {v}");
        assert_eq!(v["id"], 5, "{version}: {v}");
        assert_eq!(v["result"]["isError"], true, "{version}: {v}");
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("runs only as a task"), "{version}: {v}");
        assert!(text.contains("2026-07-28"), "{version}: {v}");
    }
    let modern = post(
        addr,
        &request(
            json!(6),
            "tools/call",
            json!({"name": "exported", "arguments": {}}),
        ),
    );
    assert_eq!(modern.json()["error"]["code"], -32021, "{}", modern.text());
}

/// `resources/subscribe` takes what the server serves (a resource or a template's URI),
/// up to 256 per session; anything else is refused, not kept.
#[test]
fn subscriptions_are_to_served_resources_and_bounded() {
    let addr = start();
    let (mut c, _) = Client::open(addr, "2025-11-25");
    for uri in [
        "docs://nothing",
        "",
        "docs:",
        &format!("notes://{}", "x".repeat(100_000)),
    ] {
        let r = c.call("resources/subscribe", json!({"uri": uri}));
        assert_eq!(r["error"]["code"], -32002, "{uri:.40}: {r}");
    }
    assert_eq!(
        c.call("resources/subscribe", json!({"uri": "docs://readme"}))["result"],
        json!({})
    );
    for n in 0..255 {
        let r = c.call(
            "resources/subscribe",
            json!({"uri": format!("notes://{n}")}),
        );
        assert_eq!(r["result"], json!({}), "{n}: {r}");
    }
    // 256 held: a new one is refused, one held again is fine, and room comes back.
    let full = c.call("resources/subscribe", json!({"uri": "notes://999"}));
    assert_eq!(full["error"]["code"], -32602, "{full}");
    assert!(
        full["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 256"),
        "{full}"
    );
    assert_eq!(
        c.call("resources/subscribe", json!({"uri": "notes://7"}))["result"],
        json!({})
    );
    assert_eq!(
        c.call("resources/unsubscribe", json!({"uri": "notes://7"}))["result"],
        json!({})
    );
    assert_eq!(
        c.call("resources/subscribe", json!({"uri": "notes://999"}))["result"],
        json!({})
    );
}

/// Opens `c`'s GET stream and waits for its head; the stream stays open while it lives.
fn open_stream(addr: SocketAddr, c: &Client) -> Sse {
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\n\r\n",
        c.session
    );
    let mut stream = Sse::send(addr, get.as_bytes());
    while !stream.buf.contains("\r\n\r\n") {
        assert!(stream.pump());
    }
    assert!(stream.buf.starts_with("HTTP/1.1 200"), "{}", stream.buf);
    stream
}

/// At the cap, a new session takes the place of the one unused the longest (its client
/// gets 404 and initializes again), never of one with a stream open: a flood of
/// `initialize`s cannot lock clients out. Only when every session is in use is it 503.
#[test]
fn at_the_session_cap_the_one_unused_longest_makes_room() {
    let legacy = Legacy::default().max_sessions(2);
    let addr = serve_in_background(server(legacy, Arc::default()).http());
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let (a, _) = Client::open(addr, "2025-11-25");
    let _a_stream = open_stream(addr, &a);
    let (b, _) = Client::open(addr, "2025-11-25");
    std::thread::sleep(Duration::from_millis(50));
    // A flood of new sessions: each takes the place of the last one; `a` stays.
    for _ in 0..20 {
        let r = post_legacy(addr, &initialize_body("2025-11-25", json!({})), &[]);
        assert_eq!(r.status, 200, "{}", r.text());
    }
    assert_eq!(b.post(&ping).status, 404, "b was unused the longest");
    assert_eq!(a.post(&ping).status, 200, "a has its stream open");
    // With every session in use (each with its stream), a new one is refused.
    let (c, _) = Client::open(addr, "2025-11-25");
    let _c_stream = open_stream(addr, &c);
    let r = post_legacy(addr, &initialize_body("2025-11-25", json!({})), &[]);
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(c.post(&ping).status, 200);
}

#[test]
fn sessions_are_capped_and_expire() {
    let legacy = Legacy::default()
        .max_sessions(2)
        .idle_timeout(Duration::from_secs(1));
    let addr = serve_in_background(server(legacy, Arc::default()).http());
    let (a, _) = Client::open(addr, "2025-11-25");
    let (b, _) = Client::open(addr, "2025-11-25");
    let _a_stream = open_stream(addr, &a);
    let _b_stream = open_stream(addr, &b);
    let r = post_legacy(addr, &initialize_body("2025-11-25", json!({})), &[]);
    assert_eq!(r.status, 503);
    drop((_a_stream, _b_stream));
    std::thread::sleep(Duration::from_millis(1300));
    // Idle past the timeout: forgotten (404, the client initializes again), and a new
    // session fits.
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    assert_eq!(a.post(&body).status, 404);
    let r = post_legacy(addr, &initialize_body("2025-11-25", json!({})), &[]);
    assert_eq!(r.status, 200);
}

/// A server shutting down ends legacy sessions' GET streams at once (so their connections
/// can close), but lets their requests in flight finish within the drain, as modern ones
/// do; the sessions end after it. They were cancelled as the drain began.
#[test]
fn shutting_down_lets_a_sessions_requests_finish() {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let http = server(Legacy::default(), Arc::default())
        .http()
        .lame_duck(Duration::from_millis(200));
    let serving = std::thread::spawn(move || {
        serve_until(std_listener, http, async {
            let _ = stopped.await;
        })
    });
    let (c, _) = Client::open(addr, "2025-11-25");
    let mut get = open_stream(addr, &c);
    let nap = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nap", "arguments": {}}});
    let mut napping = c.stream(&nap);
    let started = napping.next(Duration::from_secs(5)).expect("its log line");
    assert_eq!(started["method"], "notifications/message", "{started}");
    stop.send(()).unwrap();
    let ended = Instant::now();
    while !get.buf.ends_with("\r\n0\r\n\r\n") {
        assert!(
            ended.elapsed() < Duration::from_secs(3),
            "the GET stream goes on"
        );
        if !get.pump() {
            break;
        }
    }
    let done = napping
        .next(Duration::from_secs(5))
        .expect("the call's result");
    assert_eq!(done["id"], 5, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "rested", "{done}");
    // Idle connections are left for their client to close; then serving ends.
    drop((get, napping));
    serving.join().unwrap().unwrap();
}

/// A session in use does not go idle: its idle time counts from when its GET stream
/// ended, and a request being served keeps it (a stream held past the timeout, or a call
/// longer than it, left the session forgotten, and the call cancelled).
#[test]
fn a_session_goes_idle_from_the_end_of_its_use() {
    let legacy = Legacy::default().idle_timeout(Duration::from_secs(1));
    let addr = serve_in_background(server(legacy, Arc::default()).http());
    let (a, _) = Client::open(addr, "2025-11-25");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let stream = open_stream(addr, &a);
    std::thread::sleep(Duration::from_millis(1500));
    drop(stream);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(a.post(&ping).status, 200, "after a GET stream held 1.5 s");
    // A call of a minute, in flight 1.5 s: the session is in use.
    let doze = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "doze", "arguments": {}}});
    let mut dozing = a.stream(&doze);
    let waiting = std::thread::spawn(move || while dozing.pump() {});
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(a.post(&ping).status, 200, "with a call in flight 1.5 s");
    assert!(!waiting.is_finished(), "the call was cut off");
}

#[test]
fn a_modern_only_server_names_its_versions_to_initialize() {
    let s = server(Legacy::off(), Arc::default());
    let addr = serve_in_background(s.clone().http());
    let r = post_legacy(addr, &initialize_body("2025-11-25", json!({})), &[]);
    assert_eq!(r.status, 400);
    let e = &r.json()["error"];
    assert_eq!(e["code"], -32022);
    assert_eq!(
        e["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
    assert!(e["message"].as_str().unwrap().contains("2026-07-28"));
    assert!(r.header("mcp-session-id").is_none());
    let discover = post(addr, &request(json!(1), "server/discover", json!({}))).json();
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );

    // The same on stdio.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use tokio::io::AsyncWriteExt;
        let (mut lines, mut write) = stdio_pair(s);
        let line = format!("{}\n", initialize_body("2025-06-18", json!({})));
        write.write_all(line.as_bytes()).await.unwrap();
        let reply: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(reply["error"]["code"], -32022);
        assert_eq!(reply["error"]["data"]["supported"], json!(["2026-07-28"]));
    });
}

/// A method the server does not serve, asked statelessly: `-32601` (HTTP 404) naming the
/// versions the server serves, the list `server/discover` gives: all four on a dual-era
/// server, 2026-07-28 alone on a modern-only one.
#[test]
fn an_unknown_method_names_the_versions_the_server_serves() {
    let dual = json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]);
    for (legacy, versions) in [
        (Legacy::default(), dual),
        (Legacy::off(), json!(["2026-07-28"])),
    ] {
        let addr = serve_in_background(server(legacy, Arc::default()).http());
        let discover = post(addr, &request(json!(1), "server/discover", json!({}))).json();
        assert_eq!(
            discover["result"]["supportedVersions"], versions,
            "{discover}"
        );
        let r = post(addr, &request(json!(2), "foo/bar", json!({})));
        assert_eq!(r.status, 404, "{}", r.text());
        let e = &r.json()["error"];
        assert_eq!(e["code"], -32601, "{e}");
        assert_eq!(e["data"]["supported"], versions, "{e}");
        let list: Vec<&str> = versions
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let message = format!(
            "Method not found: foo/bar (this server speaks MCP {})",
            list.join(", ")
        );
        assert_eq!(e["message"], message, "{e}");
    }
}

/// The conformance example as a child on stdio: its input, its output's lines, and the
/// guard that ends it.
fn conformance_on_stdio() -> (
    std::process::ChildStdin,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    ChildGuard,
) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    (stdin, lines, ChildGuard(child))
}

/// stdio: one session per process, requests to the client on stdout, answers on stdin; a
/// modern request on the same process stays stateless.
#[test]
fn a_stdio_process_serves_one_legacy_session_and_modern_requests() {
    use std::io::Write;
    let (mut stdin, mut lines, _guard) = conformance_on_stdio();
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    let mut recv = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    send(initialize_body("2025-06-18", json!({"sampling": {}})));
    let init = recv();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_sampling", "arguments": {"prompt": "Capital?"}}}),
    );
    let ask = recv();
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], "Capital?");
    // The server's ids are its own: id 0 here, while the client used 0 for initialize.
    assert_eq!(ask["id"], 0);
    send(
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}}),
    );
    let done = recv();
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["content"][0]["text"], "LLM response: Paris");
    send(request(json!(2), "server/discover", json!({})));
    assert_eq!(recv()["result"]["resultType"], "complete");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(recv(), json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
}

/// In a 2025-03-26 batch on stdio, `notifications/cancelled` drops a request like any
/// other of the session's (the batch's answer leaves it out), and an `initialize` refused
/// in a batch keeps its id.
#[test]
fn a_batched_request_is_cancelled_on_stdio() {
    use std::io::Write;
    let (mut stdin, mut lines, _guard) = conformance_on_stdio();
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(initialize_body("2025-03-26", json!({})));
    let init: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!([
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "slow_compute", "arguments": {"seconds": 3}}},
        initialize_body("2025-03-26", json!({})).as_object().map(|o| {
            let mut o = o.clone();
            o.insert("id".into(), json!(3));
            Value::Object(o)
        }).unwrap(),
    ]));
    std::thread::sleep(Duration::from_millis(300));
    let started = std::time::Instant::now();
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}),
    );
    let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the cancel stopped the batch's call"
    );
    let answers = answer.as_array().expect("the batch's answers");
    assert_eq!(answers.len(), 1, "{answer}");
    assert_eq!(answers[0]["id"], 3, "{answer}");
    assert_eq!(answers[0]["error"]["code"], -32600, "{answer}");
}

/// The testing kit runs one test in both eras.
#[tokio::test]
async fn the_testing_kit_speaks_both_eras() {
    use mcp_runtime::testing::{Answers, TestClient};
    let answers = Answers::new().accept("who", json!({"name": "Ada"}));
    for client in [
        TestClient::new(server(Legacy::default(), Arc::default())),
        TestClient::legacy(server(Legacy::default(), Arc::default())),
    ] {
        let out = client
            .call_tool_answering("greet", json!({}), &answers)
            .await
            .unwrap();
        assert_eq!(out.text(), "Hello, Ada!");
        let sum = client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(sum.result["structuredContent"], json!({"sum": 3}));
    }
    let old = TestClient::legacy_at(server(Legacy::default(), Arc::default()), "2025-03-26");
    assert_eq!(
        old.negotiated_version().unwrap().as_deref(),
        Some("2025-03-26")
    );
    let sum = old.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap();
    assert!(sum.result.get("structuredContent").is_none());
}

/// The even numbers below `n`.
#[tool]
async fn evens(n: u32) -> Json<Vec<u32>> {
    Json((0..n).filter(|i| i % 2 == 0).collect())
}

/// A tool whose output is no object is served wrapped to the revisions that allow only
/// objects there (2025-06-18, 2025-11-25): its schema and its structured content alike;
/// 2026-07-28 and 2025-03-26 (which has neither) are left as they are.
#[tokio::test]
async fn outputs_that_are_no_object_are_wrapped_for_legacy_sessions() {
    use mcp_runtime::testing::TestClient;
    let server = || {
        Server::builder("wrap", "1.0")
            .tools(tools![evens, add])
            .build()
            .unwrap()
    };
    let schema_of = |tools: &[Value], name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["outputSchema"].clone()
    };
    for version in ["2025-11-25", "2025-06-18"] {
        let c = TestClient::legacy_at(server(), version);
        let tools = c.list_all("tools/list", "tools").await.unwrap();
        let schema = schema_of(&tools, "evens");
        assert_eq!(schema["type"], "object", "{version}: {schema}");
        assert_eq!(schema["required"], json!(["result"]), "{version}");
        assert_eq!(schema["properties"]["result"]["type"], "array", "{version}");
        assert_eq!(
            schema_of(&tools, "add")["properties"]["sum"]["type"],
            "integer"
        );
        let out = c.call_tool("evens", json!({"n": 5})).await.unwrap();
        assert_eq!(
            out.result["structuredContent"],
            json!({"result": [0, 2, 4]}),
            "{version}"
        );
        let out = c.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(
            out.result["structuredContent"],
            json!({"sum": 3}),
            "{version}"
        );
    }
    let c = TestClient::new(server());
    let tools = c.list_all("tools/list", "tools").await.unwrap();
    assert_eq!(schema_of(&tools, "evens")["type"], "array");
    let out = c.call_tool("evens", json!({"n": 3})).await.unwrap();
    assert_eq!(out.result["structuredContent"], json!([0, 2]));
    let c = TestClient::legacy_at(server(), "2025-03-26");
    let out = c.call_tool("evens", json!({"n": 3})).await.unwrap();
    assert!(
        out.result.get("structuredContent").is_none(),
        "{}",
        out.result
    );
}

/// A legacy `initialize` sent with `MCP-Protocol-Version: 2026-07-28` goes the modern
/// way, where there is no `initialize`: `-32601` saying how a session opens, not a
/// `-32022` that names the requested revision among the supported ones; and with the
/// status the spec fixes for `-32601`, 404 (a 400 with it would not read as modern).
#[test]
fn an_initialize_sent_as_2026_07_28_says_how_a_session_opens() {
    let addr = start();
    let body = initialize_body("2025-11-25", json!({}));
    let r = post_legacy(
        addr,
        &body,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "initialize"),
        ],
    );
    let v = r.json();
    assert_eq!(r.status, 404, "{v}");
    assert_eq!(v["error"]["code"], -32601, "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("without that header"), "{message}");
    assert_eq!(v["error"]["data"]["requested"], "2025-11-25", "{v}");
    // Without the header it opens a session.
    let r = post_legacy(addr, &body, &[]);
    assert_eq!(r.status, 200, "{}", r.text());
}

/// When the request that asked the client something is over before the answer came
/// (here cancelled), the server cancels its own question too, so the client can close
/// the form it shows.
#[test]
fn an_unanswered_question_is_cancelled_with_its_request() {
    let s = server(Legacy::default(), Arc::default());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use tokio::io::AsyncWriteExt;
        let (mut lines, mut write) = stdio_pair(s);
        let mut next = async || -> Value {
            let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
                .await
                .expect("a line in time")
                .unwrap()
                .unwrap();
            serde_json::from_str(&line).unwrap()
        };
        let caps = json!({"elicitation": {}});
        for msg in [
            initialize_body("2025-11-25", caps),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}),
        ] {
            write.write_all(format!("{msg}\n").as_bytes()).await.unwrap();
        }
        assert_eq!(next().await["id"], 0, "the initialize answer");
        let ask = next().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
        write
            .write_all(format!("{cancel}\n").as_bytes())
            .await
            .unwrap();
        let cancelled = next().await;
        assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
        assert_eq!(cancelled["params"]["requestId"], ask["id"], "{cancelled}");
    });
}

/// Over HTTP the cancellation of the question goes on the stream the question went on
/// (the POST's), before that stream ends: a client with no GET stream open gets it too.
#[test]
fn an_unanswered_question_is_cancelled_on_the_stream_it_was_asked_on() {
    let addr = start();
    let (c, _) = Client::open(addr, "2025-11-25");
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "greet", "arguments": {}}});
    let mut sse = c.stream(&call);
    let ask = sse.next(Duration::from_secs(5)).expect("the question");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
    assert_eq!(c.post(&cancel).status, 202);
    let mut rest: Vec<Value> = sse.next(Duration::from_secs(10)).into_iter().collect();
    while let Some(m) = sse.next(Duration::from_secs(2)) {
        rest.push(m);
    }
    assert_eq!(rest.len(), 1, "only the cancellation, no answer: {rest:?}");
    assert_eq!(rest[0]["method"], "notifications/cancelled", "{rest:?}");
    assert_eq!(rest[0]["params"]["requestId"], ask["id"], "{rest:?}");
}

/// `s` serving stdio over an in-process pipe: the lines it writes, and the end the test
/// writes its lines to. Call it inside a runtime.
fn stdio_pair(
    s: Server,
) -> (
    tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
) {
    use tokio::io::AsyncBufReadExt;
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(theirs);
    tokio::spawn(s.serve_io(r, w, std::future::pending()));
    let (read, write) = tokio::io::split(ours);
    (tokio::io::BufReader::new(read).lines(), write)
}

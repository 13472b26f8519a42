//! Hostile clients and faulty networks, at the wire: slow bodies and headers, idle and
//! stalled connections, load shedding (requests in flight, listen streams, connections),
//! blocking tools, symlinks out of a `SafePath` root, malformed envelopes and headers, and
//! the spec points a review found unmet.

mod common;

use common::*;
use mcp_runtime::config::Limits;
use mcp_runtime::{
    Error, Input, Progress, SafePath, Server, State, resource, resources, tool, tools,
};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Says hi.
#[tool]
async fn hi() -> &'static str {
    "hi"
}

/// Returns `kib` KiB of text.
#[tool]
async fn big(kib: u32) -> String {
    "x".repeat(kib as usize * 1024)
}

/// Waits until released.
#[tool]
async fn held(gate: State<Arc<Notify>>) -> &'static str {
    gate.notified().await;
    "released"
}

/// Blocks its thread at the barrier (a plain `fn`: it runs on the blocking pool).
#[tool]
fn busy(barrier: State<Arc<Barrier>>) -> &'static str {
    barrier.wait();
    "done"
}

/// Reports progress from a task it leaves behind, after it answered.
#[tool]
async fn leaves_a_task(progress: Progress) -> &'static str {
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        progress.report(1.0, None, Some("too late"));
    });
    "answered"
}

/// Asks a form question.
#[tool]
async fn asks_form(input: Input) -> Result<String, Error> {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Ok_ {
        ok: bool,
    }
    let a: Ok_ = input.elicit("ok", "OK?").await?.accepted()?;
    Ok(a.ok.to_string())
}

/// Asks the client's model, offering it a tool.
#[tool]
async fn samples_with_tools(input: Input) -> Result<String, Error> {
    let params = json!({"messages": [], "maxTokens": 10, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
    let r = input.sample("s", params).await?;
    Ok(r.to_string())
}

/// The same question through `Input::ask`, as a request of its own (what a proxy passes
/// on from another server).
#[tool]
async fn asks_sampling_with_tools(input: Input) -> Result<String, Error> {
    let params = json!({"messages": [], "maxTokens": 10, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
    let r = input
        .ask(
            "s",
            json!({"method": "sampling/createMessage", "params": params}),
        )
        .await?;
    Ok(r.to_string())
}

/// Routes by region; `region` is mirrored in `Mcp-Param-Region`.
#[tool]
async fn routed(#[arg(header = "Region")] region: String) -> String {
    region
}

/// A file of the served root.
#[resource("files:///{+path}")]
async fn file(path: SafePath, root: State<std::path::PathBuf>) -> Result<String, Error> {
    let bytes = path.read_under(&*root).await?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn server(limits: Limits, root: std::path::PathBuf) -> (Server, Arc<Notify>, Arc<Barrier>) {
    let gate = Arc::new(Notify::new());
    let barrier = Arc::new(Barrier::new(4));
    let server = Server::builder("hostile", "1.0")
        .limits(limits)
        .tools(tools![
            hi,
            big,
            held,
            busy,
            leaves_a_task,
            asks_form,
            samples_with_tools,
            asks_sampling_with_tools,
            routed
        ])
        .resources(resources![file])
        .state(Arc::clone(&gate))
        .state(Arc::clone(&barrier))
        .state(root)
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    (server, gate, barrier)
}

fn plain() -> Server {
    server(Limits::default(), std::env::temp_dir()).0
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// The request bytes of `body` with the standard headers, `Connection: close` dropped
/// when `keep` (so the socket stays open).
fn bytes_of(addr: SocketAddr, body: &Value, keep: bool) -> Vec<u8> {
    let headers = standard_headers(body);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let b = post_bytes(addr, body.to_string().as_bytes(), &h);
    if keep {
        String::from_utf8(b)
            .unwrap()
            .replace("Connection: close\r\n", "")
            .into_bytes()
    } else {
        b
    }
}

/// Reads until the server closes the connection (or `limit` passes); whether it closed.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 65536];
    while start.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn slow_bodies_idle_connections_and_slow_headers_are_cut_off() {
    let http = plain()
        .http()
        .idle_timeout(Duration::from_millis(300))
        .header_read_timeout(Duration::from_millis(700))
        .body_read_timeout(Duration::from_millis(600));
    let addr = serve_in_background(http);

    // A body one byte every 200 ms: 408 with a JSON-RPC error, and the connection closes.
    let body = call(1, "hi", json!({})).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: hi\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = Vec::new();
    for b in body.bytes() {
        if s.write_all(&[b]).is_err() {
            break;
        }
        let mut chunk = [0u8; 4096];
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(_) => {}
        }
        if got.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let r = parse_response(&got);
    assert_eq!(r.status, 408, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], -32600);
    assert!(closed_within(&mut s, Duration::from_secs(3)));

    // Silence before the first byte: closed after the idle deadline.
    let mut idle = TcpStream::connect(addr).unwrap();
    let start = Instant::now();
    assert!(closed_within(&mut idle, Duration::from_secs(5)));
    assert!(start.elapsed() >= Duration::from_millis(250));

    // Header bytes one every 250 ms: the header deadline (from the first byte) ends it.
    let mut slow = TcpStream::connect(addr).unwrap();
    let start = Instant::now();
    let mut open = true;
    for b in b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa" {
        if slow.write_all(&[*b]).is_err() {
            open = false;
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
        if start.elapsed() > Duration::from_secs(4) {
            break;
        }
    }
    assert!(!open || closed_within(&mut slow, Duration::from_secs(3)));
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "a slow header held the connection"
    );
}

#[test]
fn a_requests_header_time_counts_from_its_first_byte() {
    // Idle 1 s, headers 300 ms. A client that sends its first byte at once and then one
    // every 200 ms is never silent for the idle deadline; the header deadline cuts it off
    // 300 ms after its first byte (it once counted from the start of the wait, idle +
    // header: 1.3 s).
    let (server, _, _) = server(Limits::default(), std::env::temp_dir());
    let addr = serve_in_background(
        server
            .http()
            .idle_timeout(Duration::from_secs(1))
            .header_read_timeout(Duration::from_millis(300)),
    );
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let start = Instant::now();
    let mut closed_at = None;
    for b in b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
        if s.write_all(&[*b]).is_err() {
            closed_at = Some(start.elapsed());
            break;
        }
        // Up to 200 ms for the end of the connection to show.
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(0) => {
                closed_at = Some(start.elapsed());
                break;
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                closed_at = Some(start.elapsed());
                break;
            }
        }
    }
    let closed_at = closed_at.expect("the connection was cut off");
    assert!(closed_at < Duration::from_millis(1200), "{closed_at:?}");
}

#[test]
fn a_body_that_comes_after_its_head_but_in_time_is_served() {
    // The head and the body's first half at once, the rest 300 ms later: inside the body
    // deadline (the first read finds the body incomplete, so the rest is read under it).
    let http = plain().http().body_read_timeout(Duration::from_secs(3));
    let addr = serve_in_background(http);
    let bytes = bytes_of(addr, &call(1, "hi", json!({})), true);
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let split = end + (bytes.len() - end) / 2;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(&bytes[..split]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    s.write_all(&bytes[split..]).unwrap();
    expect_text(&mut s, 1, "hi");
    // The same connection serves a whole request next.
    s.write_all(&bytes_of(addr, &call(2, "hi", json!({})), true))
        .unwrap();
    expect_text(&mut s, 2, "hi");
}

/// Reads one response with a `Content-Length` from a keep-alive connection.
fn read_one_response(s: &mut TcpStream) -> Response {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no content-length in {head}"));
            if got.len() >= end + 4 + len {
                return parse_response(&got);
            }
        }
        match s.read(&mut chunk) {
            Ok(0) => panic!(
                "closed before a whole response: {:?}",
                String::from_utf8_lossy(&got)
            ),
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) => panic!("read: {e}"),
        }
    }
}

/// Reads one response from a keep-alive connection: a 200 whose tool result is `text`.
fn expect_text(s: &mut TcpStream, id: u64, text: &str) {
    let r = read_one_response(s);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["id"], id, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], text);
}

#[test]
fn a_long_request_does_not_use_up_the_next_requests_header_deadline() {
    // The wait for a request may last up to idle + header (400 ms here); a request
    // served for longer than that on a keep-alive connection leaves the next one a
    // deadline of its own.
    let (server, gate, _) = server(Limits::default(), std::env::temp_dir());
    let addr = serve_in_background(
        server
            .http()
            .idle_timeout(Duration::from_millis(200))
            .header_read_timeout(Duration::from_millis(200)),
    );
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(&bytes_of(addr, &call(1, "held", json!({})), true))
        .unwrap();
    std::thread::sleep(Duration::from_millis(900));
    gate.notify_one();
    expect_text(&mut s, 1, "released");
    s.write_all(&bytes_of(addr, &call(2, "hi", json!({})), true))
        .unwrap();
    expect_text(&mut s, 2, "hi");
    // And the idle deadline still closes it afterwards.
    assert!(closed_within(&mut s, Duration::from_secs(3)));
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_frees_its_request() {
    let (server, _, _) = server(Limits::default().max_in_flight(1), std::env::temp_dir());
    let addr = serve_in_background(
        server
            .http()
            .write_stall_timeout(Duration::from_millis(300)),
    );
    // 16 MiB the client never reads: the write stalls, the connection is closed, and the
    // request's slot comes back.
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(&bytes_of(
        addr,
        &call(1, "big", json!({"kib": 16384})),
        true,
    ))
    .unwrap();
    let mut served = false;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        let r = post(addr, &call(2, "hi", json!({})));
        if r.status == 200 {
            served = true;
            break;
        }
        assert_eq!(r.status, 503, "{}", r.text());
    }
    assert!(served, "the stalled response never let go of its slot");
    drop(s);
}

#[tokio::test]
async fn limits_set_to_zero_are_refused_naming_each() {
    use mcp_runtime::config::{Legacy, RequestState, Tasks};
    // Server options: `build` names each.
    let err = Server::builder("zero", "1.0")
        .tools(tools![hi])
        .limits(
            Limits::default()
                .request_timeout(Duration::ZERO)
                .max_in_flight(0)
                .max_request_bytes_in_flight(0),
        )
        .request_state(
            RequestState::single_instance()
                .ttl(Duration::ZERO)
                .leeway(Duration::from_micros(900)),
        )
        .handle_ttl(Duration::from_micros(10))
        .tasks(
            Tasks::default()
                .ttl(Duration::from_micros(10))
                .max_running(0),
        )
        .legacy(
            Legacy::default()
                .max_sessions(0)
                .idle_timeout(Duration::ZERO),
        )
        .build()
        .unwrap_err()
        .to_string();
    for what in [
        "request_timeout",
        "RequestState::ttl",
        "handle_ttl",
        "max_in_flight",
        "max_request_bytes_in_flight",
        "Tasks::ttl",
        "Tasks::max_running",
        "Legacy::max_sessions",
        "Legacy::idle_timeout",
    ] {
        assert!(err.contains(what), "{what} not named: {err}");
    }
    // With the legacy era off its options do not matter.
    Server::builder("zero", "1.0")
        .tools(tools![hi])
        .legacy(Legacy::off().max_sessions(0))
        .build()
        .expect("the options of an era that is off are not checked");
    // A zero ttl with a leeway still gives each state the leeway's time: taken.
    Server::builder("zero", "1.0")
        .tools(tools![hi])
        .request_state(RequestState::single_instance().ttl(Duration::ZERO))
        .build()
        .expect("a zero ttl with the default leeway is refused");
    // HTTP options: `serve` fails at once, before accepting, naming each.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = tokio::time::timeout(
        Duration::from_secs(5),
        plain()
            .http()
            .body_limit(0)
            .max_header_size(0)
            .max_headers(0)
            .idle_timeout(Duration::ZERO)
            .header_read_timeout(Duration::ZERO)
            .write_stall_timeout(Duration::ZERO)
            .keep_alive(Duration::ZERO)
            .serve(listener, std::future::pending()),
    )
    .await
    .expect("serve ran with zero limits instead of refusing them")
    .unwrap_err();
    assert_eq!(served.kind(), std::io::ErrorKind::InvalidInput);
    let text = served.to_string();
    for what in [
        "body_limit",
        "max_header_size",
        "max_headers",
        "idle_timeout",
        "header_read_timeout",
        "write_stall_timeout",
        "keep_alive",
    ] {
        assert!(text.contains(what), "{what} not named: {text}");
    }
    assert!(!text.contains("body_read_timeout"), "{text}");
    // A mounted router cannot carry an error: it panics, naming the option.
    let router_panic = |http: mcp_runtime::http::HttpServer| {
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| http.into_router()));
        let panic = made.expect_err("a router with a zero limit was made");
        panic.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let text = router_panic(plain().http().body_read_timeout(Duration::ZERO));
    assert!(text.contains("body_read_timeout"), "{text}");
    let text = router_panic(plain().http().body_limit(0).keep_alive(Duration::ZERO));
    assert!(
        text.contains("body_limit") && text.contains("keep_alive"),
        "{text}"
    );
    // Connection options do not apply to a router, so they do not stop one.
    drop(
        plain()
            .http()
            .write_stall_timeout(Duration::ZERO)
            .idle_timeout(Duration::ZERO)
            .into_router(),
    );
}

#[test]
fn over_the_in_flight_cap_requests_get_503_with_retry_after() {
    let (server, gate, _) = server(Limits::default().max_in_flight(2), std::env::temp_dir());
    let addr = serve_in_background(server.http().retry_after(7));
    let waiting: Vec<_> = (0..2)
        .map(|i| std::thread::spawn(move || post(addr, &call(10 + i, "held", json!({})))))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // Headers only: the body is never needed to refuse.
    let mut s = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 100000\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let r = parse_response(&buf);
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("7"));
    assert_eq!(r.json()["error"]["code"], -32603);
    // Released, the two finish, and requests are served again.
    while waiting.iter().any(|w| !w.is_finished()) {
        gate.notify_waiters();
        std::thread::sleep(Duration::from_millis(20));
    }
    for w in waiting {
        assert_eq!(
            w.join().unwrap().json()["result"]["content"][0]["text"],
            "released"
        );
    }
    assert_eq!(post(addr, &call(3, "hi", json!({}))).status, 200);
}

/// `call(id, name, {})` padded (an unknown `_meta` key, which must be accepted) to about
/// `size` bytes.
fn padded_call(id: u64, name: &str, size: usize) -> Value {
    let mut c = call(id, name, json!({}));
    let base = c.to_string().len() + r#","com.example/pad":"""#.len();
    c["params"]["_meta"]["com.example/pad"] = json!("x".repeat(size.saturating_sub(base)));
    c
}

/// Requests hold their bytes (and the JSON read from them) until answered: past the bytes
/// in flight a request is refused as busy, from its declared length or, for a body of
/// unknown length, as it arrives; one larger than the limit passes alone.
#[test]
fn past_the_request_bytes_in_flight_requests_get_503() {
    let (server, gate, _) = server(
        Limits::default().max_request_bytes_in_flight(2000),
        std::env::temp_dir(),
    );
    let addr = serve_in_background(server.http());
    let first = padded_call(1, "held", 1500);
    assert!((1490..=1500).contains(&first.to_string().len()));
    let held = std::thread::spawn(move || post(addr, &first));
    std::thread::sleep(Duration::from_millis(300));
    // 1500 + 600 is past 2000: refused, whatever the count of requests.
    let r = post(addr, &padded_call(2, "hi", 600));
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.header("retry-after").is_some());
    assert_eq!(r.json()["error"]["code"], -32603);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bytes in flight")
    );
    // The same body chunked (no declared length): refused as its bytes arrive.
    let body = padded_call(3, "hi", 600);
    let text = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n"
    );
    for (k, v) in standard_headers(&body) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("\r\n{:x}\r\n{text}\r\n0\r\n\r\n", text.len()));
    let r = raw(addr, head.as_bytes());
    assert_eq!(r.status, 503, "{}", r.text());
    // A small one still fits beside the held one.
    let r = post(addr, &padded_call(4, "hi", 300));
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "hi",
        "{}",
        r.text()
    );
    // Released, the bytes are given back: a request larger than the limit passes alone.
    while !held.is_finished() {
        gate.notify_waiters();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(held.join().unwrap().status, 200);
    let r = post(addr, &padded_call(5, "hi", 5000));
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "hi",
        "{}",
        r.text()
    );
}

/// A request with both `Content-Length` and `Transfer-Encoding` is 400 and its connection
/// closed (S-3): what follows on the connection (a request smuggled in by a front that
/// framed by the length) is never served. A chunked request alone is served.
#[test]
fn content_length_with_transfer_encoding_is_400_and_the_connection_closes() {
    let addr = serve_in_background(plain().http());
    let body = request(json!(1), "server/discover", json!({}));
    let text = body.to_string();
    let mut fields = String::new();
    for (k, v) in standard_headers(&body) {
        fields.push_str(&format!("{k}: {v}\r\n"));
    }
    let chunked = format!("{:x}\r\n{text}\r\n0\r\n\r\n", text.len());
    let smuggled = bytes_of(addr, &request(json!(2), "server/discover", json!({})), true);
    for lengths in [
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        "content-length: 99999999\r\ntransfer-encoding: chunked\r\n",
    ] {
        let mut req =
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{lengths}{fields}\r\n{chunked}")
                .into_bytes();
        req.extend_from_slice(&smuggled);
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&req).unwrap();
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        let r = parse_response(&buf);
        assert_eq!(r.status, 400, "{lengths}: {}", r.text());
        assert_eq!(r.json()["error"]["code"], -32600, "{lengths}");
        assert_eq!(r.header("connection"), Some("close"), "{lengths}");
        let text = String::from_utf8_lossy(&buf);
        assert_eq!(
            text.matches("HTTP/1.1 ").count(),
            1,
            "one answer only: {text}"
        );
    }
    // Chunked alone: served, and the connection kept.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n{fields}\r\n{chunked}"
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let r = parse_response(&buf);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["result"].is_object());
}

#[test]
fn over_the_listen_cap_streams_get_503_with_retry_after() {
    let s = Server::builder("x", "1")
        .tools(tools![hi])
        .limits(Limits::default().max_subscriptions(1))
        .build()
        .unwrap();
    let addr = serve_in_background(s.http());
    let listen = request(
        json!(1),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut first = Sse::send(addr, &bytes_of(addr, &listen, true));
    assert!(
        first.next(Duration::from_secs(5)).is_some(),
        "the first stream's ack"
    );
    let r = post(
        addr,
        &request(
            json!(2),
            "subscriptions/listen",
            json!({"notifications": {}}),
        ),
    );
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
}

#[test]
fn past_the_connection_cap_new_connections_wait() {
    let addr = serve_in_background(
        plain()
            .http()
            .max_connections(1)
            .idle_timeout(Duration::from_secs(10)),
    );
    let holder = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut waiting = TcpStream::connect(addr).unwrap();
    waiting
        .write_all(&bytes_of(addr, &call(1, "hi", json!({})), false))
        .unwrap();
    waiting
        .set_read_timeout(Some(Duration::from_millis(400)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert!(waiting.read(&mut buf).is_err(), "served past the cap");
    drop(holder);
    waiting
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut all = Vec::new();
    waiting.read_to_end(&mut all).unwrap();
    assert_eq!(parse_response(&all).status, 200);
}

/// A request sent on a connection still waiting in the listen backlog when the lame duck
/// ends (here, past the connection cap) is answered, with `Connection: close`, not reset
/// by the listener closing: a balancer does not send a POST again once it reached an
/// instance, so a reset there is a failed call.
#[test]
fn a_request_waiting_in_the_backlog_when_serving_stops_is_answered() {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let http = plain()
        .http()
        .max_connections(1)
        .lame_duck(Duration::from_millis(300));
    let serving = std::thread::spawn(move || {
        serve_until(std_listener, http, async {
            let _ = stopped.await;
        })
    });
    // The one connection the cap allows, idle; the next waits in the backlog, its request
    // sent.
    let holder = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut waiting = TcpStream::connect(addr).unwrap();
    waiting
        .write_all(&bytes_of(addr, &call(1, "hi", json!({})), true))
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    stop.send(()).unwrap();
    waiting
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut all = Vec::new();
    let read = waiting.read_to_end(&mut all);
    assert!(read.is_ok(), "the waiting connection was cut: {read:?}");
    let r = parse_response(&all);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&all));
    assert_eq!(r.header("connection"), Some("close"));
    // The idle one is left for its client to close; then serving ends.
    drop(holder);
    serving.join().unwrap().unwrap();
}

#[test]
fn blocking_tools_do_not_hold_up_other_requests() {
    let (server, _, barrier) = server(Limits::default(), std::env::temp_dir());
    // Two runtime workers (as serve_in_background has), three blocked tools.
    let addr = serve_in_background(server.http());
    let blocked: Vec<_> = (0..3)
        .map(|i| std::thread::spawn(move || post(addr, &call(20 + i, "busy", json!({})))))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let r = post(addr, &request(json!(1), "server/discover", json!({})));
    assert_eq!(r.json()["result"]["resultType"], "complete");
    barrier.wait();
    for b in blocked {
        assert_eq!(
            b.join().unwrap().json()["result"]["content"][0]["text"],
            "done"
        );
    }
}

#[test]
fn safe_paths_do_not_follow_symlinks_out_of_the_root() {
    use std::os::unix::fs::symlink;
    let base = std::env::temp_dir().join(format!("mcp-safe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (root, outside) = (base.join("root"), base.join("outside"));
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("sub/ok.txt"), "inside").unwrap();
    std::fs::write(outside.join("secret.txt"), "SECRET").unwrap();
    symlink(outside.join("secret.txt"), root.join("file-link")).unwrap();
    symlink(&outside, root.join("dir-link")).unwrap();
    symlink("sub/ok.txt", root.join("inner-link")).unwrap();

    let (server, _, _) = server(Limits::default(), root.clone());
    let client = mcp_runtime::testing::TestClient::new(server);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        assert_eq!(
            client
                .read_resource("files:///sub/ok.txt")
                .await
                .unwrap()
                .text(),
            "inside"
        );
        assert_eq!(
            client
                .read_resource("files:///inner-link")
                .await
                .unwrap()
                .text(),
            "inside"
        );
        for uri in ["files:///file-link", "files:///dir-link/secret.txt"] {
            let e = client.read_resource(uri).await.unwrap_err();
            assert_eq!(e.code, -32602, "{uri}: {e}");
            assert!(e.message.contains("Resource not found"), "{e}");
            assert!(!e.message.contains("SECRET"));
        }
    });

    // A link swapped back and forth while it is opened never reads outside.
    let flip = root.join("flip");
    symlink("sub/ok.txt", &flip).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (flip, stop, secret) = (flip.clone(), Arc::clone(&stop), outside.join("secret.txt"));
        std::thread::spawn(move || {
            let tmp = flip.with_extension("tmp");
            let mut n = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let target = if n.is_multiple_of(2) {
                    secret.clone()
                } else {
                    "sub/ok.txt".into()
                };
                let _ = std::fs::remove_file(&tmp);
                symlink(&target, &tmp).unwrap();
                std::fs::rename(&tmp, &flip).unwrap();
                n += 1;
            }
        })
    };
    let p = SafePath::new("flip").unwrap();
    let mut inside = 0;
    for _ in 0..2000 {
        match p.open_under(&root) {
            Ok(mut f) => {
                let mut s = String::new();
                f.read_to_string(&mut s).unwrap();
                assert_eq!(s, "inside", "read through a swapped link");
                inside += 1;
            }
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(inside > 0);
    let _ = std::fs::remove_dir_all(&base);
}

/// What is under the root but not a readable regular file reads as not found, saying
/// nothing of the file system: a FIFO (which an open would wait on with no writer, a
/// blocking thread held for good and the process kept from exiting), a path through a
/// file ("Not a directory"), a name too long.
#[test]
fn safe_paths_refuse_fifos_and_hide_file_system_errors() {
    let base = std::env::temp_dir().join(format!("mcp-safe-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("a.md"), "a").unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(base.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let (server, _, _) = server(Limits::default(), base.clone());
    let client = mcp_runtime::testing::TestClient::new(server);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let long = format!("files:///{}", ["a"; 3000].join("/"));
        for uri in ["files:///fifo", "files:///a.md/x", long.as_str()] {
            let read = client.read_resource(uri);
            let e = tokio::time::timeout(Duration::from_secs(10), read)
                .await
                .unwrap_or_else(|_| panic!("{uri}: the read waited"))
                .unwrap_err();
            assert_eq!(e.code, -32602, "{uri}: {e}");
            assert!(e.message.contains("Resource not found"), "{e}");
        }
        assert_eq!(
            client.read_resource("files:///a.md").await.unwrap().text(),
            "a"
        );
    });
    // A root that does not open is the server's error, not hidden as a missing file.
    let p = SafePath::new("x").unwrap();
    let e = p.open_under(base.join("a.md")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotADirectory, "{e}");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn envelopes_hosts_and_media_types_are_checked_at_the_wire() {
    let addr = serve_in_background(plain().http());
    // `method` and `result` together: not a valid message.
    let mut both = request(json!(1), "tools/list", json!({}));
    both["result"] = json!({});
    let r = post(addr, &both);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32600))
    );
    // A Host with userinfo smuggled in is not loopback.
    let body = request(json!(2), "server/discover", json!({})).to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}@other.example\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    let r = raw(addr, req.as_bytes());
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["error"]["code"], -32600);
    // SSE only: even an immediate answer comes as an event.
    let b = request(json!(3), "server/discover", json!({}));
    let r = post_with(addr, &b, &["Accept"], &[("Accept", "text/event-stream")]);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.sse_events()[0]["result"]["resultType"], "complete");
    // The transport's own refusals carry JSON-RPC error bodies.
    let r = post_with(
        addr,
        &b,
        &["Content-Type"],
        &[("Content-Type", "text/plain")],
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (415, json!(-32600))
    );
    let r = post_with(addr, &b, &["Accept"], &[("Accept", "text/html")]);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (406, json!(-32600))
    );
    // A header section over 64 KiB is 431; one under it is served.
    let b = request(json!(4), "server/discover", json!({}));
    for (size, status) in [(60 << 10, 200), (70 << 10, 431)] {
        let big = "x".repeat(size);
        let r = post_with(addr, &b, &[], &[("X-Filler", big.as_str())]);
        assert_eq!(r.status, status, "a {size}-byte header");
    }
    // More than 100 header fields is 431 too, unless the server takes more.
    let fields: Vec<(String, String)> = (0..150).map(|i| (format!("X-F{i}"), "1".into())).collect();
    let fields: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(post_with(addr, &b, &[], &fields).status, 431);
    let roomy = serve_in_background(plain().http().max_headers(200));
    assert_eq!(post_with(roomy, &b, &[], &fields).status, 200);
    // Declared too large: refused before the body is read.
    let mut s = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{{",
        5 << 20
    );
    s.write_all(head.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let r = parse_response(&buf);
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (413, json!(-32600))
    );
}

#[test]
fn capabilities_are_checked_to_the_sub_capability() {
    let addr = serve_in_background(plain().http());
    // Only URL-mode elicitation declared: a form question is refused, naming form mode.
    let mut b = call(1, "asks_form", json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"url": {}}});
    let e = post(addr, &b).json();
    assert_eq!(e["error"]["code"], -32021, "{e}");
    assert_eq!(
        e["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    // Sampling with tools needs `sampling.tools`, asked either way.
    for tool in ["samples_with_tools", "asks_sampling_with_tools"] {
        let mut b = call(2, tool, json!({}));
        b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"sampling": {}});
        let e = post(addr, &b).json();
        assert_eq!(
            e["error"]["data"]["requiredCapabilities"],
            json!({"sampling": {"tools": {}}}),
            "{tool}: {e}"
        );
    }
    // A mirrored argument of the wrong JSON type is a schema failure (isError), not -32020.
    let b = call(3, "routed", json!({"region": 7}));
    let r = post_with(addr, &b, &[], &[("Mcp-Param-Region", "7")]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["isError"], true);
}

#[test]
fn a_declared_schema_dialect_is_honoured_and_an_unknown_one_refused() {
    let draft4 = r#"{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 5, "exclusiveMaximum": true}}}"#;
    let tool = mcp_runtime::def::ToolDef::new(
        "bounded",
        mcp_runtime::handler::Signature::new(),
        |_c| async { Ok::<_, Error>("ok") },
    )
    .description("Takes n < 5.")
    .input_schema_json(draft4);
    let s = Server::builder("x", "1").tool(tool).build().unwrap();
    let client = mcp_runtime::testing::TestClient::new(s);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        assert!(
            client
                .call_tool("bounded", json!({"n": 5}))
                .await
                .unwrap()
                .is_error()
        );
        assert!(
            !client
                .call_tool("bounded", json!({"n": 4}))
                .await
                .unwrap()
                .is_error()
        );
    });
    let odd =
        mcp_runtime::def::ToolDef::new("odd", mcp_runtime::handler::Signature::new(), |_c| async {
            Ok::<_, Error>("ok")
        })
        .description("Odd dialect.")
        .input_schema_json(r#"{"$schema": "https://example.com/dialect", "type": "object"}"#);
    let err = Server::builder("x", "1").tool(odd).build().unwrap_err();
    assert!(
        err.to_string().contains("unsupported JSON Schema dialect"),
        "{err}"
    );
}

/// The stdio transport in-process, over a pipe, line by line.
struct Pipe {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Pipe {
    fn serve(server: Server) -> Pipe {
        use tokio::io::AsyncBufReadExt;
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(theirs);
        tokio::spawn(server.serve_io(r, w, std::future::pending()));
        let (read, write) = tokio::io::split(ours);
        Pipe {
            write,
            lines: tokio::io::BufReader::new(read).lines(),
        }
    }
    async fn send(&mut self, v: &Value) {
        use tokio::io::AsyncWriteExt;
        self.write
            .write_all(format!("{v}\n").as_bytes())
            .await
            .unwrap();
    }
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.lines.next_line())
            .await
            .ok()?;
        line.unwrap().map(|l| serde_json::from_str(&l).unwrap())
    }
}

#[tokio::test]
async fn stdio_keeps_ids_apart_and_a_finished_request_quiet() {
    let (server, gate, _) = server(Limits::default(), std::env::temp_dir());
    let mut p = Pipe::serve(server);
    // An id still in flight cannot be reused; the first request is unaffected.
    p.send(&call(1, "held", json!({}))).await;
    p.send(&call(1, "hi", json!({}))).await;
    let refused = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    p.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    )
    .await;
    gate.notify_waiters();
    assert!(
        p.next(Duration::from_millis(300)).await.is_none(),
        "the cancelled request answered"
    );

    // Progress from a task the handler left behind stops with its answer.
    let mut b = call(2, "leaves_a_task", json!({}));
    b["params"]["_meta"]["progressToken"] = json!("t");
    p.send(&b).await;
    let answer = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(answer["id"], 2);
    assert!(
        p.next(Duration::from_millis(400)).await.is_none(),
        "progress after the answer"
    );
}

/// On stdio, a request past the bytes in flight is refused with -32603 (reading goes
/// on: an answer the held requests wait for must still be read).
#[tokio::test]
async fn on_stdio_past_the_request_bytes_in_flight_requests_are_refused() {
    let (server, gate, _) = server(
        Limits::default().max_request_bytes_in_flight(2000),
        std::env::temp_dir(),
    );
    let mut p = Pipe::serve(server);
    p.send(&padded_call(1, "held", 1500)).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    p.send(&padded_call(2, "hi", 600)).await;
    let refused = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    p.send(&padded_call(3, "hi", 300)).await;
    let fits = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(fits["result"]["content"][0]["text"], "hi", "{fits}");
    gate.notify_waiters();
    let released = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(released["id"], 1, "{released}");
    p.send(&padded_call(4, "hi", 5000)).await;
    let alone = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(alone["result"]["content"][0]["text"], "hi", "{alone}");
}

/// A bus whose stream ends at once: the server can no longer feed listen streams.
struct EndingBus;

impl mcp_runtime::store::NotificationBus for EndingBus {
    fn publish(&self, _: mcp_runtime::Change) {}
    fn subscribe(&self) -> futures_util::stream::BoxStream<'static, mcp_runtime::Change> {
        Box::pin(futures_util::stream::empty())
    }
}

#[tokio::test]
async fn on_stdio_an_abrupt_end_of_a_listen_stream_is_a_cancellation() {
    let s = Server::builder("x", "1")
        .tools(tools![hi])
        .notification_bus(EndingBus)
        .build()
        .unwrap();
    let mut p = Pipe::serve(s);
    p.send(&request(
        json!("sub"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    ))
    .await;
    let ack = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let end = p.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(end["method"], "notifications/cancelled");
    assert_eq!(end["params"]["requestId"], "sub");
}

/// Answers a long while coming, each bigger than the pipe holds.
#[tool]
async fn big_after(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "x".repeat(100_000)
}

/// A slow reader at the end of input: one answer is still being written when the next
/// request finishes (the wind-down once gave up that write half way, and the next answer
/// followed the broken one on the same line). Each answer comes whole, on a line of its
/// own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_writes_each_answer_whole_to_a_slow_reader_at_the_end_of_input() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = Server::builder("x", "1")
        .tools(tools![big_after])
        .build()
        .unwrap();
    let (mut client, theirs) = tokio::io::duplex(4096);
    let (r, w) = tokio::io::split(theirs);
    let serving = tokio::spawn(server.serve_io(r, w, std::future::pending()));
    for (id, ms) in [(1, 100), (2, 200)] {
        let body = request(
            json!(id),
            "tools/call",
            json!({"name": "big_after", "arguments": {"ms": ms}}),
        );
        client
            .write_all(format!("{body}\n").as_bytes())
            .await
            .unwrap();
    }
    // The end of input, then 4 KiB every 5 ms: about 125 ms per answer.
    client.shutdown().await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let n = tokio::time::timeout(Duration::from_secs(10), client.read(&mut buf))
            .await
            .expect("the server ends its output")
            .unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    serving.await.unwrap().unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{} bytes: {:.200}", text.len(), text);
    for (line, id) in lines.iter().zip([1, 2]) {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:.200}"));
        assert_eq!(v["id"], id);
        assert_eq!(
            v["result"]["content"][0]["text"].as_str().map(str::len),
            Some(100_000)
        );
    }
}

/// A peer that stops reading cannot keep `serve_io` from its shutdown: with an answer
/// (given at once, or by a spawned call) stuck in a write the peer never reads, the
/// shutdown still ends the serving within the drain's time (5 s), and the call still in
/// flight is cancelled. Before, the loop waited in the write and never looked at the
/// shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_io_stops_on_shutdown_while_the_peer_does_not_read() {
    use tokio::io::AsyncWriteExt;
    for ms in [0, 50] {
        let server = Server::builder("x", "1")
            .tools(tools![big_after])
            .build()
            .unwrap();
        let (mut client, theirs) = tokio::io::duplex(4096);
        let (r, w) = tokio::io::split(theirs);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve_io(r, w, async move {
            let _ = stopped.await;
        }));
        // Two answers of 100 KB the peer never reads, the second still running.
        for (id, ms) in [(1, ms), (2, 60_000)] {
            let body = request(
                json!(id),
                "tools/call",
                json!({"name": "big_after", "arguments": {"ms": ms}}),
            );
            client
                .write_all(format!("{body}\n").as_bytes())
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!serving.is_finished());
        let asked = std::time::Instant::now();
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(15), serving)
            .await
            .unwrap_or_else(|_| panic!("serve_io did not end 15 s after its shutdown ({ms} ms)"))
            .unwrap()
            .unwrap();
        let took = asked.elapsed();
        assert!(took < Duration::from_secs(12), "{took:?}");
        drop(client);
    }
}

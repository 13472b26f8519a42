//! Soak benchmark: a server under mixed good and hostile traffic for `SOAK_SECS` seconds
//! (default 180), with its default limits. Prints the server's memory (RSS now, and the
//! kernel's high-water mark) and open file descriptors at the start, every
//! `SOAK_REPORT_SECS` (default 30) and at the end (after the traffic stopped and
//! `SOAK_SETTLE_SECS`, default 5, passed), with what each kind of traffic saw. Numbers are
//! printed, never asserted; the exit status is non-zero only when a good request failed or
//! the server died.
//!
//! The server is this binary re-executed with `--serve` (a child process, so its figures
//! are its own): `add`, `slow` (sleeps 100 ms), `big` (an 8 MiB result), `ask` (an MRTR
//! elicitation) and a resource template, on the default multi-thread runtime.
//!
//! Good traffic: `SOAK_GOOD` (default 4) keep-alive clients, each looping over
//! `tools/call add`, `tools/list`, `tools/call slow`, both MRTR rounds of `ask`, and
//! `resources/read`, checking every answer. Hostile traffic, `SOAK_HOSTILE` (default 8)
//! loops of each kind:
//! - *slow headers*: one header byte a second, until the server closes the connection;
//! - *slow body*: a declared 64 KiB body sent 16 bytes every 500 ms, until refused;
//! - *non-reader*: asks for `big` and never reads the answer, until the server closes;
//! - *malformed*: bad JSON, a body over the limit, a foreign `Origin`, a tampered
//!   `requestState`, nesting 100 000 deep, a mangled request line, wrong media types
//!   (each answered otherwise than expected is printed);
//! - *churn*: connections opened and closed at once or after half a request line;
//! - *bulky*: a `slow` call of 3.5 MiB, under the 4 MiB body limit, its `_meta` padded
//!   with an array of zeros (which JSON parsing makes some 17 times larger), again and
//!   again: the request bytes in flight (16 MiB by default) let four at a time in, the rest
//!   get 503, so memory stays bounded (good requests, a few hundred bytes, still fit).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, header};
use hyper_util::rt::TokioIo;
use mcp_runtime::{Error, Input, Server, resource, resources, tool, tools};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// ---------------------------------------------------------------------------------------
// The server.

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Takes a tenth of a second.
#[tool]
async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "slept"
}

/// An 8 MiB answer: more than the kernel's socket buffers hold (4 MiB send, here 4 KiB
/// receive), so a client that does not read stalls the server's write.
#[tool]
async fn big() -> String {
    "x".repeat(8 << 20)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Asks for a name.
#[tool]
async fn ask(input: Input) -> Result<String, Error> {
    let n: Name = input.elicit("n", "Your name?").await?.accepted()?;
    Ok(format!("hello {}", n.name))
}

/// A note by id.
#[resource("notes://{id}")]
async fn note(id: u32) -> String {
    format!("note {id}")
}

fn serve() -> std::io::Result<()> {
    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        println!("{}", listener.local_addr()?.port());
        let server = Server::builder("soak", "1.0")
            .tools(tools![add, slow, big, ask])
            .resources(resources![note])
            .request_state(mcp_runtime::config::RequestState::single_instance())
            .build()
            .map_err(std::io::Error::other)?;
        server.http().serve(listener, std::future::pending()).await
    })
}

// ---------------------------------------------------------------------------------------
// Measuring the server process.

struct ServerProcess {
    child: Child,
    port: u16,
}

impl ServerProcess {
    fn spawn() -> Result<ServerProcess, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let child = Command::new(exe)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn();
        let mut child = child.map_err(|e| format!("spawn: {e}"))?;
        let mut line = String::new();
        let _ = BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line);
        let port = line.trim().parse().unwrap_or(0);
        let server = ServerProcess { child, port };
        if port == 0 {
            return Err("the server did not start".into());
        }
        Ok(server)
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn figures(&self) -> Figures {
        let pid = self.child.id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let kib = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
        Figures {
            rss_kib: kib("VmRSS:"),
            hwm_kib: kib("VmHWM:"),
            threads: kib("Threads:"),
            fds,
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy)]
struct Figures {
    rss_kib: u64,
    hwm_kib: u64,
    threads: u64,
    fds: usize,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

// ---------------------------------------------------------------------------------------
// Counters.

#[derive(Default)]
struct Counters {
    good_ok: AtomicU64,
    good_failed: AtomicU64,
    slow_headers_cut: AtomicU64,
    slow_body_refused: AtomicU64,
    non_readers_cut: AtomicU64,
    malformed_refused: AtomicU64,
    malformed_unexpected: AtomicU64,
    churned: AtomicU64,
    bulky_served: AtomicU64,
    bulky_busy: AtomicU64,
    bulky_unexpected: AtomicU64,
    /// Seconds (summed) the server took to cut slow-header and slow-body clients.
    slow_headers_secs: AtomicU64,
    slow_body_secs: AtomicU64,
    non_reader_secs: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------
// Good traffic.

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

fn post(port: u16, method: &str, name: Option<&str>, body: String) -> Request<Full<Bytes>> {
    let mut req = Request::post("/mcp")
        .header(header::HOST, format!("127.0.0.1:{port}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    req.body(Full::new(Bytes::from(body)))
        .expect("a valid request")
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(port: u16) -> Result<Sender, String> {
    let stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(tx)
}

async fn exchange(tx: &mut Sender, req: Request<Full<Bytes>>) -> Result<Value, String> {
    tx.ready().await.map_err(|e| format!("connection: {e}"))?;
    let resp = tx
        .send_request(req)
        .await
        .map_err(|e| format!("request: {e}"))?;
    let status = resp.status();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    if status != 200 {
        return Err(format!(
            "status {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))
}

fn call_body(id: u64, name: &str, extra: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{{extra}}},{META}}}}}"#
    )
}

/// One loop of every good request; `Err` says which failed and how.
async fn good_round(tx: &mut Sender, port: u16, id: &mut u64) -> Result<u64, String> {
    let mut next = || {
        *id += 1;
        *id
    };
    let r = exchange(
        tx,
        post(
            port,
            "tools/call",
            Some("add"),
            call_body(next(), "add", r#""a":2,"b":3"#),
        ),
    )
    .await?;
    if r["result"]["content"][0]["text"] != "5" {
        return Err(format!("add: {r}"));
    }
    let list = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{{{META}}}}}"#,
        next()
    );
    let r = exchange(tx, post(port, "tools/list", None, list)).await?;
    if r["result"]["tools"].as_array().map(Vec::len) != Some(4) {
        return Err(format!("tools/list: {r}"));
    }
    let r = exchange(
        tx,
        post(
            port,
            "tools/call",
            Some("slow"),
            call_body(next(), "slow", ""),
        ),
    )
    .await?;
    if r["result"]["content"][0]["text"] != "slept" {
        return Err(format!("slow: {r}"));
    }
    // MRTR: round one asks, round two answers with the sealed state.
    let r = exchange(
        tx,
        post(
            port,
            "tools/call",
            Some("ask"),
            call_body(next(), "ask", ""),
        ),
    )
    .await?;
    let state = r["result"]["requestState"]
        .as_str()
        .ok_or_else(|| format!("ask round 1: {r}"))?
        .to_owned();
    let round2 = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"ask","arguments":{{}},"inputResponses":{{"n":{{"action":"accept","content":{{"name":"soak"}}}}}},"requestState":"{state}",{META}}}}}"#,
        next()
    );
    let r = exchange(tx, post(port, "tools/call", Some("ask"), round2)).await?;
    if r["result"]["content"][0]["text"] != "hello soak" {
        return Err(format!("ask round 2: {r}"));
    }
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"resources/read","params":{{"uri":"notes://7",{META}}}}}"#,
        next()
    );
    let r = exchange(tx, post(port, "resources/read", Some("notes://7"), read)).await?;
    if r["result"]["contents"][0]["text"] != "note 7" {
        return Err(format!("resources/read: {r}"));
    }
    Ok(6)
}

async fn good_client(port: u16, stop: Arc<AtomicBool>, c: Arc<Counters>, log: Arc<Log>) {
    let mut id = 0;
    let mut tx = None;
    while !stop.load(Ordering::Relaxed) {
        if tx.is_none() {
            match connect(port).await {
                Ok(t) => tx = Some(t),
                Err(e) => {
                    log.failure(format!("good client: {e}"));
                    bump(&c.good_failed);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            }
        }
        let Some(t) = tx.as_mut() else { continue };
        match good_round(t, port, &mut id).await {
            Ok(n) => {
                c.good_ok.fetch_add(n, Ordering::Relaxed);
            }
            Err(e) => {
                log.failure(format!("good request: {e}"));
                bump(&c.good_failed);
                tx = None;
            }
        }
    }
}

/// The first few failures and unexpected answers, to print.
#[derive(Default)]
struct Log(std::sync::Mutex<Vec<String>>);

impl Log {
    fn failure(&self, s: String) {
        if let Ok(mut v) = self.0.lock()
            && v.len() < 10
        {
            v.push(s);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hostile traffic.

fn raw_request(port: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

const STD: &[(&str, &str)] = &[
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "add"),
    ("Connection", "close"),
];

/// Reads until the server closes; the status line's code (0 if none) and whether it closed
/// before `limit`.
async fn read_to_close<R: tokio::io::AsyncRead + Unpin>(s: &mut R, limit: Duration) -> (u16, bool) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut head = Vec::new();
    let end = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(end, s.read(&mut buf)).await {
            Err(_) => return (status_of(&head), false),
            Ok(Ok(0)) | Ok(Err(_)) => return (status_of(&head), true),
            Ok(Ok(n)) => {
                if head.len() < 64 {
                    head.extend_from_slice(&buf[..n.min(64)]);
                }
            }
        }
    }
}

fn status_of(head: &[u8]) -> u16 {
    let text = String::from_utf8_lossy(head);
    text.strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3)?.parse().ok())
        .unwrap_or(0)
}

async fn slow_headers(port: u16, stop: Arc<AtomicBool>, c: Arc<Counters>) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let start = Instant::now();
        let line = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ");
        let _ = s.write_all(line.as_bytes()).await;
        let mut cut = false;
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if s.write_all(b"a").await.is_err() {
                cut = true;
                break;
            }
            let mut probe = [0u8; 256];
            if let Ok(Ok(0) | Err(_)) =
                tokio::time::timeout(Duration::from_millis(1), s.read(&mut probe)).await
            {
                cut = true;
                break;
            }
        }
        if cut {
            bump(&c.slow_headers_cut);
            c.slow_headers_secs
                .fetch_add(start.elapsed().as_secs(), Ordering::Relaxed);
        }
    }
}

async fn slow_body(port: u16, stop: Arc<AtomicBool>, c: Arc<Counters>) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let start = Instant::now();
        let mut head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
        for (k, v) in STD {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("Content-Length: 65536\r\n\r\n");
        let _ = s.write_all(head.as_bytes()).await;
        let mut refused = false;
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if s.write_all(&[b' '; 16]).await.is_err() {
                refused = true;
                break;
            }
            let mut probe = [0u8; 256];
            match tokio::time::timeout(Duration::from_millis(1), s.read(&mut probe)).await {
                Ok(Ok(0) | Err(_)) => {
                    refused = true;
                    break;
                }
                Ok(Ok(_)) => {
                    // The 408 arrived; the server closes next.
                    refused = true;
                    break;
                }
                Err(_) => {}
            }
        }
        if refused {
            bump(&c.slow_body_refused);
            c.slow_body_secs
                .fetch_add(start.elapsed().as_secs(), Ordering::Relaxed);
        }
    }
}

async fn non_reader(port: u16, stop: Arc<AtomicBool>, c: Arc<Counters>) {
    while !stop.load(Ordering::Relaxed) {
        // A small receive buffer, so the answer cannot all sit in our kernel buffers.
        let socket = tokio::net::TcpSocket::new_v4().and_then(|s| {
            s.set_recv_buffer_size(4096)?;
            Ok(s)
        });
        let connected = match socket {
            Ok(s) => s.connect(([127, 0, 0, 1], port).into()).await,
            Err(e) => Err(e),
        };
        let Ok(mut s) = connected else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let start = Instant::now();
        let body = call_body(1, "big", "");
        let mut headers = STD.to_vec();
        headers[4] = ("Mcp-Name", "big");
        headers.pop(); // keep-alive
        let _ = s
            .write_all(&raw_request(port, &headers, body.as_bytes()))
            .await;
        // Never read: wait for the server to give up on us (the write-stall deadline), then
        // see whether the connection is closed.
        let mut cut = false;
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_secs(1)).await;
            // A zero-byte-window peer: the server's close shows as an error on a write
            // once its RST comes back.
            if s.write_all(b"\r\n").await.is_err() {
                cut = true;
                break;
            }
        }
        if cut {
            bump(&c.non_readers_cut);
            c.non_reader_secs
                .fetch_add(start.elapsed().as_secs(), Ordering::Relaxed);
        }
    }
}

async fn malformed(port: u16, stop: Arc<AtomicBool>, c: Arc<Counters>, log: Arc<Log>) {
    let valid = call_body(1, "add", r#""a":1,"b":2"#);
    let tampered = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ask","arguments":{{}},"inputResponses":{{"n":{{"action":"accept","content":{{"name":"x"}}}}}},"requestState":"v1.k1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",{META}}}}}"#
    );
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = vec![b' '; 5 * 1024 * 1024];
    let mut ask_headers = STD.to_vec();
    ask_headers[4] = ("Mcp-Name", "ask");
    let with = |extra: (&'static str, &'static str)| {
        let mut h = STD.to_vec();
        h.push(extra);
        h
    };
    let mut wrong_type = STD.to_vec();
    wrong_type[0] = ("Content-Type", "text/plain");
    // (what it is, request bytes, the statuses that count as refused correctly)
    let cases: Vec<(&str, Vec<u8>, &[u16])> = vec![
        ("bad JSON", raw_request(port, STD, b"{not json"), &[400]),
        (
            "a body over the limit",
            raw_request(port, STD, &huge),
            &[413],
        ),
        (
            "a foreign Origin",
            raw_request(
                port,
                &with(("Origin", "http://evil.example")),
                valid.as_bytes(),
            ),
            &[403],
        ),
        (
            "a tampered requestState",
            raw_request(port, &ask_headers, tampered.as_bytes()),
            &[200, 400],
        ),
        // 200 KB: while the bulky calls hold the request bytes in flight, it may be
        // refused as busy (503) before it is parsed.
        (
            "deep nesting",
            raw_request(port, STD, deep.as_bytes()),
            &[400, 503],
        ),
        (
            "a wrong Content-Type",
            raw_request(port, &wrong_type, valid.as_bytes()),
            &[415],
        ),
        (
            "a mangled request line",
            b"P\x00ST /mcp HTTP/9.9\r\n\r\n".to_vec(),
            &[0, 400],
        ),
        (
            "no Mcp-Method",
            raw_request(port, &STD[..3], valid.as_bytes()),
            &[400],
        ),
    ];
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let (what, bytes, ok) = &cases[i % cases.len()];
        i += 1;
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        // Write and read at once: a server may answer (413) before the body is sent.
        let (mut r, mut w) = s.split();
        let (_, (status, closed)) = tokio::join!(
            w.write_all(bytes),
            read_to_close(&mut r, Duration::from_secs(15))
        );
        if closed && ok.contains(&status) {
            bump(&c.malformed_refused);
        } else {
            bump(&c.malformed_unexpected);
            let how = if closed {
                "closed"
            } else {
                "not closed within 15 s"
            };
            log.failure(format!(
                "malformed ({what}): status {status} (0: none), {how}; expected {ok:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Bulky requests: a 3.5 MiB `slow` call, served (200) or refused as busy (503).
async fn bulky(port: u16, stop: Arc<AtomicBool>, c: Arc<Counters>, log: Arc<Log>) {
    let size = 3584 * 1024;
    let head = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"com.example/pad":[0"#;
    let tail = "]}}}";
    let zeros = (size - head.len() - tail.len()) / 2;
    let body = format!("{head}{}{tail}", ",0".repeat(zeros));
    let mut headers = STD.to_vec();
    headers[4] = ("Mcp-Name", "slow");
    let bytes = raw_request(port, &headers, body.as_bytes());
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        // Write and read at once: a busy server answers before the body is sent.
        let (mut r, mut w) = s.split();
        let (_, (status, _)) = tokio::join!(
            w.write_all(&bytes),
            read_to_close(&mut r, Duration::from_secs(30))
        );
        match status {
            200 => bump(&c.bulky_served),
            503 => bump(&c.bulky_busy),
            other => {
                bump(&c.bulky_unexpected);
                log.failure(format!(
                    "bulky: status {other} (0: none); expected 200 or 503"
                ));
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn churn(port: u16, stop: Arc<AtomicBool>, c: Arc<Counters>) {
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await {
            if i.is_multiple_of(2) {
                let _ = s.write_all(b"POST /mcp HT").await;
            }
            drop(s);
            bump(&c.churned);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// ---------------------------------------------------------------------------------------

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn show(label: &str, f: Figures, c: &Counters) -> String {
    format!(
        "{label:>8}  rss {:>7.1} MiB  peak {:>7.1} MiB  fds {:>5}  threads {:>3}  good {:>8}",
        mib(f.rss_kib),
        mib(f.hwm_kib),
        f.fds,
        f.threads,
        get(&c.good_ok)
    )
}

async fn soak() -> Result<(), String> {
    let secs = env_u64("SOAK_SECS", 180);
    let report = env_u64("SOAK_REPORT_SECS", 30).max(1);
    let settle = env_u64("SOAK_SETTLE_SECS", 5);
    let n_good = env_u64("SOAK_GOOD", 4);
    let n_hostile = env_u64("SOAK_HOSTILE", 8);
    let mut server = ServerProcess::spawn()?;
    let port = server.port;
    println!(
        "soak: {secs}s of mixed traffic on 127.0.0.1:{port}: {n_good} good clients, {n_hostile} \
         of each hostile kind (slow headers, slow body, non-reader, malformed, churn, bulky)"
    );
    let c = Arc::new(Counters::default());
    let log = Arc::new(Log::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..n_good {
        tasks.push(tokio::spawn(good_client(
            port,
            stop.clone(),
            c.clone(),
            log.clone(),
        )));
    }
    // A short warm-up of good traffic only: the starting figures are a working server's.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let start = server.figures();
    println!("{}", show("start", start, &c));
    for _ in 0..n_hostile {
        tasks.push(tokio::spawn(slow_headers(port, stop.clone(), c.clone())));
        tasks.push(tokio::spawn(slow_body(port, stop.clone(), c.clone())));
        tasks.push(tokio::spawn(non_reader(port, stop.clone(), c.clone())));
        tasks.push(tokio::spawn(malformed(
            port,
            stop.clone(),
            c.clone(),
            log.clone(),
        )));
        tasks.push(tokio::spawn(churn(port, stop.clone(), c.clone())));
        tasks.push(tokio::spawn(bulky(
            port,
            stop.clone(),
            c.clone(),
            log.clone(),
        )));
    }
    let began = Instant::now();
    let mut peak = start;
    let mut next_report = report;
    while began.elapsed() < Duration::from_secs(secs) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if !server.alive() {
            return Err("the server died".into());
        }
        let f = server.figures();
        peak.rss_kib = peak.rss_kib.max(f.rss_kib);
        peak.hwm_kib = peak.hwm_kib.max(f.hwm_kib);
        peak.fds = peak.fds.max(f.fds);
        peak.threads = peak.threads.max(f.threads);
        if began.elapsed().as_secs() >= next_report {
            println!("{}", show(&format!("{next_report}s"), f, &c));
            next_report += report;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(20), t).await;
    }
    tokio::time::sleep(Duration::from_secs(settle)).await;
    let end = server.figures();
    println!("{}", show("peak", peak, &c));
    println!("{}", show("end", end, &c));
    let mut lines = BTreeMap::new();
    lines.insert(
        "good requests",
        format!(
            "{} ok, {} failed ({:.0}/s)",
            get(&c.good_ok),
            get(&c.good_failed),
            get(&c.good_ok) as f64 / secs.max(1) as f64
        ),
    );
    // Hostile kinds the server ends: how many, and after how long on average. Each is
    // ended by one of the server's deadlines (its defaults); a run shorter than the
    // deadline cannot see one ended, and says so rather than print a bare 0.
    for (kind, what, n, total, deadline, name) in [
        (
            "slow headers",
            "cut off by the server",
            &c.slow_headers_cut,
            &c.slow_headers_secs,
            mcp_runtime::http::DEFAULT_HEADER_READ_TIMEOUT,
            "header-read",
        ),
        (
            "slow bodies",
            "refused",
            &c.slow_body_refused,
            &c.slow_body_secs,
            mcp_runtime::http::DEFAULT_BODY_READ_TIMEOUT,
            "body-read",
        ),
        (
            "non-readers",
            "cut off",
            &c.non_readers_cut,
            &c.non_reader_secs,
            mcp_runtime::http::DEFAULT_WRITE_STALL_TIMEOUT,
            "write-stall",
        ),
    ] {
        let line = match get(n) {
            0 if secs <= deadline.as_secs() => format!(
                "none {what}: the run ({secs}s) ends before the server's {name} deadline \
                 ({}s); SOAK_SECS={} or more shows them",
                deadline.as_secs(),
                deadline.as_secs() + 15
            ),
            n => format!(
                "{n} {what}, after {:.1}s on average (the {name} deadline is {}s)",
                get(total) as f64 / n as f64,
                deadline.as_secs()
            ),
        };
        lines.insert(kind, line);
    }
    lines.insert(
        "malformed",
        format!(
            "{} refused as expected, {} otherwise",
            get(&c.malformed_refused),
            get(&c.malformed_unexpected)
        ),
    );
    lines.insert(
        "bulky",
        format!(
            "{} served, {} refused as busy, {} otherwise",
            get(&c.bulky_served),
            get(&c.bulky_busy),
            get(&c.bulky_unexpected)
        ),
    );
    lines.insert(
        "churn",
        format!("{} connections opened and dropped", get(&c.churned)),
    );
    for (k, v) in lines {
        println!("  {k:<14} {v}");
    }
    println!(
        "memory: start {:.1} MiB, peak {:.1} MiB (kernel high-water mark), end {:.1} MiB; \
         fds: start {}, peak {}, end {}",
        mib(start.rss_kib),
        mib(peak.hwm_kib),
        mib(end.rss_kib),
        start.fds,
        peak.fds,
        end.fds
    );
    // Good requests that failed, and hostile ones the server answered otherwise than
    // expected (the first ten).
    if let Ok(v) = log.0.lock() {
        for f in v.iter() {
            println!("  unexpected: {f}");
        }
    }
    if get(&c.good_failed) > 0 {
        return Err(format!("{} good requests failed", get(&c.good_failed)));
    }
    Ok(())
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--serve") {
        return match serve() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("soak server: {e}");
                ExitCode::FAILURE
            }
        };
    }
    // `cargo bench` passes `--bench`; nothing else to parse.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    let result = rt
        .map_err(|e| e.to_string())
        .and_then(|rt| rt.block_on(soak()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soak: {e}");
            ExitCode::FAILURE
        }
    }
}

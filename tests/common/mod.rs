//! Helpers shared by the integration tests: spawning the examples, a raw HTTP/1.1 client
//! (so tests see the exact wire bytes and can send malformed requests), and request
//! builders.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const VERSION: &str = "2026-07-28";

/// The `_meta` every request needs.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A request body with `_meta` merged into `params`.
pub fn request(id: Value, method: &str, params: Value) -> Value {
    let mut params = params;
    let m = params.as_object_mut().expect("params object");
    let meta_entry = m.entry("_meta").or_insert_with(|| json!({}));
    for (k, v) in meta().as_object().unwrap() {
        meta_entry
            .as_object_mut()
            .unwrap()
            .entry(k.clone())
            .or_insert(v.clone());
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Path of a built example, built first when missing or older than its sources:
/// `cargo test` builds the examples before the tests, but `cargo test --test X` builds only
/// X, and an example built earlier would run the code from before the change under test.
/// Checked once per example per test binary.
pub fn example(name: &str) -> PathBuf {
    static CHECKED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut dir = std::env::current_exe().expect("test exe");
    dir.pop(); // deps
    dir.pop(); // debug
    let path = dir.join("examples").join(name);
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    if checked.iter().any(|n| n == name) {
        return path;
    }
    if !path.exists() || older_than_sources(&path, name) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        // What cargo set for this test process describes this package. Passed on, it
        // would look to cargo like a change of what dependencies' build scripts watch
        // (ring's watches `CARGO_PKG_NAME`): they would be rebuilt here, and again by the
        // next `cargo test`.
        for (key, _) in std::env::vars_os() {
            let Some(key) = key.to_str() else { continue };
            let set_by_cargo = key.starts_with("CARGO_PKG_")
                || matches!(
                    key,
                    "CARGO_MANIFEST_DIR"
                        | "CARGO_MANIFEST_PATH"
                        | "CARGO_CRATE_NAME"
                        | "CARGO_BIN_NAME"
                        | "CARGO_PRIMARY_PACKAGE"
                        | "CARGO_TARGET_TMPDIR"
                        | "OUT_DIR"
                );
            if set_by_cargo {
                build.env_remove(key);
            }
        }
        // The profile the tests were built with: its directory's name.
        let profile = match dir.file_name().and_then(|d| d.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let ok = build
            .args(["build", "--profile", profile, "--example", name])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo build")
            .success();
        assert!(ok, "could not build example {name}");
    }
    checked.push(name.to_owned());
    path
}

/// Whether a file the example `name` is built from changed after `binary` was written.
fn older_than_sources(binary: &std::path::Path, name: &str) -> bool {
    fn newest(path: &std::path::Path) -> Option<std::time::SystemTime> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_dir() {
            return meta.modified().ok();
        }
        std::fs::read_dir(path)
            .ok()?
            .flatten()
            .filter_map(|e| newest(&e.path()))
            .max()
    }
    let Some(built) = std::fs::metadata(binary).and_then(|m| m.modified()).ok() else {
        return true;
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = [format!("examples/{name}.rs"), format!("examples/{name}")];
    let crates = ["mcp-runtime", "mcp-macros", "mcp-uri-template", "mcp-rules"];
    let sources = example
        .iter()
        .map(String::as_str)
        .chain(["Cargo.toml", "Cargo.lock", "examples/assets"])
        .map(|p| root.join(p))
        .chain(
            crates
                .iter()
                .flat_map(|c| ["src", "Cargo.toml", "build.rs"].map(|p| root.join(c).join(p))),
        );
    sources.filter_map(|p| newest(&p)).any(|t| t > built)
}

/// A child process killed on drop.
pub struct ChildGuard(pub Child);
impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts an example serving HTTP on an ephemeral port; returns the process and address.
pub fn spawn_http_example(name: &str, args: &[&str]) -> (ChildGuard, SocketAddr) {
    let mut child = Command::new(example(name))
        .args(args)
        .env("PORT", "0")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn example");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("server exited before listening")
            .unwrap();
        if let Some(rest) = line.split("http://").nth(1) {
            let addr = rest.split('/').next().unwrap();
            break addr.parse::<SocketAddr>().expect("address");
        }
    };
    // Keep draining stderr so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (ChildGuard(child), addr)
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    /// The `data:` payloads of an SSE body, parsed.
    pub fn sse_events(&self) -> Vec<Value> {
        self.text()
            .split("\n\n")
            .filter_map(|ev| ev.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|d| serde_json::from_str(d).expect("event JSON"))
            .collect()
    }
}

/// Sends raw bytes and reads the whole response (`Connection: close` is expected in the
/// request), decoding chunked bodies.
pub fn raw(addr: SocketAddr, request: &[u8]) -> Response {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request).unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).expect("read response");
    parse_response(&buf)
}

pub fn parse_response(buf: &[u8]) -> Response {
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(buf)));
    let head = String::from_utf8_lossy(&buf[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = buf[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&b[..i]).unwrap().trim(), 16).unwrap();
        b = &b[i + 2..];
        if size == 0 {
            break;
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
    out
}

/// Builds a POST to `/mcp` with the standard headers for `body` plus `extra` header lines.
/// Header values are derived from the body (method, name) unless `extra` overrides by
/// passing `skip` names.
pub fn post_bytes(addr: SocketAddr, body: &[u8], headers: &[(&str, &str)]) -> Vec<u8> {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// The headers a conforming client sends for `body`.
pub fn standard_headers(body: &Value) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        (
            "Accept".to_owned(),
            "application/json, text/event-stream".to_owned(),
        ),
        ("MCP-Protocol-Version".to_owned(), VERSION.to_owned()),
    ];
    if let Some(m) = body["method"].as_str() {
        h.push(("Mcp-Method".to_owned(), m.to_owned()));
        let name = match m {
            "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
            "resources/read" => body["params"]["uri"].as_str(),
            "tasks/get" | "tasks/update" | "tasks/cancel" => body["params"]["taskId"].as_str(),
            _ => None,
        };
        if let Some(n) = name {
            h.push(("Mcp-Name".to_owned(), n.to_owned()));
        }
    }
    h
}

/// POSTs `body` with the standard headers, minus those named in `drop`, plus `extra`.
pub fn post_with(
    addr: SocketAddr,
    body: &Value,
    drop: &[&str],
    extra: &[(&str, &str)],
) -> Response {
    let text = body.to_string();
    let std = standard_headers(body);
    let mut headers: Vec<(&str, &str)> = std
        .iter()
        .filter(|(k, _)| !drop.iter().any(|d| d.eq_ignore_ascii_case(k)))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    headers.extend_from_slice(extra);
    raw(addr, &post_bytes(addr, text.as_bytes(), &headers))
}

/// POSTs `body` as a conforming client would.
pub fn post(addr: SocketAddr, body: &Value) -> Response {
    post_with(addr, body, &[], &[])
}

/// Serves `server` over HTTP on 127.0.0.1:0 from a background thread (for the life of the
/// test process) and returns its address.
pub fn serve_in_background(http: mcp_runtime::http::HttpServer) -> SocketAddr {
    serve_on(std::net::TcpListener::bind("127.0.0.1:0").unwrap(), http)
}

/// Serves `http` on a listener already bound (for a server that needs its own URL before
/// it starts) from a background thread; returns its address.
pub fn serve_on(
    std_listener: std::net::TcpListener,
    http: mcp_runtime::http::HttpServer,
) -> SocketAddr {
    let addr = std_listener.local_addr().unwrap();
    std::thread::spawn(move || serve_until(std_listener, http, std::future::pending()).unwrap());
    addr
}

/// Serves `http` on `std_listener` until `shutdown` completes, on a runtime of its own with
/// two workers, blocking the calling thread; what `serve` returned.
pub fn serve_until(
    std_listener: std::net::TcpListener,
    http: mcp_runtime::http::HttpServer,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    std_listener.set_nonblocking(true).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
        http.serve(listener, shutdown).await
    })
}

/// An HTTP response (SSE) read incrementally, as it streams.
pub struct Sse {
    pub stream: TcpStream,
    pub buf: String,
    seen: usize,
}

impl Sse {
    /// Sends raw request bytes and starts reading the answer.
    pub fn send(addr: SocketAddr, bytes: &[u8]) -> Sse {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        stream.write_all(bytes).unwrap();
        Sse {
            stream,
            buf: String::new(),
            seen: 0,
        }
    }

    /// Reads what arrived; `false` once the connection closed.
    pub fn pump(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        match self.stream.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                self.buf.push_str(&String::from_utf8_lossy(&chunk[..n]));
                true
            }
            Err(_) => true,
        }
    }

    pub fn lines(&self) -> Vec<String> {
        self.buf
            .lines()
            .map(|l| l.trim_end_matches('\r').to_owned())
            .collect()
    }

    /// The next `data:` message, within `wait`.
    pub fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            let data: Vec<Value> = self
                .lines()
                .iter()
                .filter_map(|l| {
                    l.strip_prefix("data: ")
                        .map(|d| serde_json::from_str(d).unwrap())
                })
                .collect();
            if data.len() > self.seen {
                self.seen += 1;
                return Some(data[self.seen - 1].clone());
            }
            if std::time::Instant::now() > deadline || !self.pump() {
                return None;
            }
        }
    }
}

/// What the Python client saw driving tasks (`py_tasks.py`): a task resolved through the
/// SDK's result claim, an `isError` task, a task answered with `tasks/update`, a cancel.
pub fn check_tasks(seen: &Value) {
    assert_eq!(seen["slow"], "py: computed in 1 s");
    assert_eq!(seen["failing_is_error"], true);
    assert_eq!(seen["handle_status"], "working");
    assert_eq!(seen["asked"], "Delete notes.txt?");
    assert_eq!(seen["update_ack"], json!(["resultType"]));
    assert_eq!(seen["confirm"], "Deleted notes.txt.");
    assert_eq!(seen["cancelled"], "cancelled");
    assert_eq!(seen["unknown_code"], -32602);
}

// ---------------------------------------------------------------------------------------
// Logs: everything the runtime logs in this test process, down to debug (a test checks
// that no token reaches them, or how often something is logged).

static LOGS: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());

struct Capture;
impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        LOGS.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// From now on, the runtime's logs of this process are kept (see [`logs`]); the
/// process's global subscriber, so tasks on any thread are heard.
pub fn capture_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use tracing_subscriber::layer::SubscriberExt;
        let only_ours = tracing_subscriber::filter::Targets::new()
            .with_target("mcp_runtime", tracing::Level::DEBUG);
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(|| Capture)
                    .with_ansi(false),
            )
            .with(only_ours);
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// What the runtime logged since [`capture_logs`].
pub fn logs() -> String {
    String::from_utf8_lossy(&LOGS.lock().unwrap()).into_owned()
}

//! HTTP benchmark: `mcp-runtime` against the floor, a minimal raw axum + serde_json
//! JSON-RPC handler, both measured in the same run over real HTTP on 127.0.0.1.
//!
//! `cargo bench --bench http` runs each server in a child process (this binary re-executed
//! with `--serve ours|raw`), so the server's CPU time can be read from `/proc/<pid>/stat`
//! without the load generator's. The load generator is closed-loop: C workers, each with
//! one keep-alive HTTP/1.1 connection, send a request, wait for the response, repeat.
//! Each phase warms up for `BENCH_WARMUP` seconds (default 0.5), then measures for
//! `BENCH_SECS` seconds (default 3). Numbers are printed, never asserted; the exit status
//! is non-zero only when a server fails to answer correctly.
//!
//! Both servers and the load generator share the machine's cores, so absolute numbers
//! depend on the machine; the ratios are what to compare.
//!
//! The baseline ("raw") parses the body into a `serde_json::Value` with axum's `Json`
//! extractor, matches `method`, and answers: `tools/call` with the sum of
//! `params.arguments.a` and `.b` (no other validation, whatever the tool name), and
//! `tools/list` by cloning and serializing a fixed `Value` per request (the result our
//! server returned, so both payloads are identical), as a naive raw server would.

use axum::extract::State;
use axum::serve::ListenerExt;
use axum::{Json, Router, routing::post};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode, header};
use hyper_util::rt::TokioIo;
use mcp_runtime::{Server, ToolError, tool, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

// ---------------------------------------------------------------------------------------
// The tools: `add` is what tools/call measures; the others give tools/list a realistic
// size, with different argument shapes (none, scalars, optional, arrays, enum, struct, map).

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Echoes the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Greets someone by name.
#[tool]
async fn greet(
    name: String,
    #[arg(description = "End with an exclamation mark")] excited: Option<bool>,
) -> String {
    let end = if excited == Some(true) { "!" } else { "." };
    format!("Hello, {name}{end}")
}

/// Sums a list of numbers.
#[tool]
async fn sum(values: Vec<f64>) -> String {
    values.iter().sum::<f64>().to_string()
}

/// Divides `a` by `b`; fails when `b` is zero.
#[tool]
async fn divide(a: f64, b: f64) -> Result<String, ToolError> {
    if b == 0.0 {
        return Err(ToolError::new("division by zero"));
    }
    Ok((a / b).to_string())
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Units {
    Celsius,
    Fahrenheit,
}

/// Reports the current weather of a city.
#[tool]
async fn weather(city: String, units: Option<Units>) -> String {
    match units {
        Some(Units::Fahrenheit) => format!("{city}: 68°F, sunny"),
        _ => format!("{city}: 20°C, sunny"),
    }
}

/// A full-text query.
#[derive(Deserialize, JsonSchema)]
struct Query {
    /// Words to look for.
    text: String,
    /// Largest number of hits.
    limit: Option<u32>,
    /// Only documents with all these tags.
    #[serde(default)]
    tags: Vec<String>,
}

/// Searches the documents.
#[tool]
async fn search(query: Query) -> String {
    let n = query.limit.unwrap_or(10);
    format!(
        "no hits for {:?} ({n} max, tags {:?})",
        query.text, query.tags
    )
}

/// Counts tagged items.
#[tool]
async fn tag_counts(counts: BTreeMap<String, u32>) -> String {
    counts.values().sum::<u32>().to_string()
}

#[derive(Serialize, JsonSchema)]
struct Stats {
    count: usize,
    min: i64,
    max: i64,
}

/// Basic statistics of a list of integers.
#[tool]
async fn stats(values: Vec<i64>) -> mcp_runtime::Json<Stats> {
    mcp_runtime::Json(Stats {
        count: values.len(),
        min: values.iter().copied().min().unwrap_or(0),
        max: values.iter().copied().max().unwrap_or(0),
    })
}

/// Returns the server's time.
#[tool]
async fn now() -> &'static str {
    "2026-07-28T00:00:00Z"
}

const TOOL_COUNT: usize = 10;

/// Where the parent hands the raw server its `tools/list` result (JSON).
const TOOLS_LIST_ENV: &str = "BENCH_TOOLS_LIST";

// ---------------------------------------------------------------------------------------
// Server side (child processes).

/// Serves `kind` on an ephemeral port and prints the port on stdout. Exits when stdin
/// closes, so a child never outlives the benchmark.
fn serve(kind: &str) -> std::io::Result<()> {
    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    // Both servers: multi-thread runtime, default worker count.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        println!("{}", listener.local_addr()?.port());
        match kind {
            "ours" => {
                let tools = tools![
                    add, echo, greet, sum, divide, weather, search, tag_counts, stats, now
                ];
                let server = Server::builder("bench", "1.0").tools(tools).build();
                let server = server.map_err(std::io::Error::other)?;
                server.http().serve(listener, std::future::pending()).await
            }
            "raw" => {
                let list = std::env::var(TOOLS_LIST_ENV).map_err(std::io::Error::other)?;
                let list: Value = serde_json::from_str(&list)?;
                let app = Router::new()
                    .route("/mcp", post(raw_handler))
                    .with_state(Arc::new(list));
                // Our transport sets TCP_NODELAY; so does the baseline.
                let listener = listener.tap_io(|s| drop(s.set_nodelay(true)));
                axum::serve(listener, app).await
            }
            _ => Err(std::io::Error::other(format!("unknown server {kind:?}"))),
        }
    })
}

/// The baseline: no validation beyond reading what it needs.
async fn raw_handler(State(list): State<Arc<Value>>, Json(req): Json<Value>) -> Json<Value> {
    let id = req["id"].clone();
    let result = match req["method"].as_str() {
        Some("tools/call") => {
            let args = &req["params"]["arguments"];
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            json!({ "content": [{ "type": "text", "text": sum.to_string() }] })
        }
        Some("tools/list") => Value::clone(&list),
        _ => {
            let error = json!({ "code": -32601, "message": "Method not found" });
            return Json(json!({ "jsonrpc": "2.0", "id": id, "error": error }));
        }
    };
    Json(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

// ---------------------------------------------------------------------------------------
// Load generator (parent process).

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// One kind of request, sent identically (headers and body) to both servers.
#[derive(Clone, Copy, PartialEq)]
enum Call {
    Add,
    List,
}

impl Call {
    fn request(self, port: u16) -> Request<Full<Bytes>> {
        let (method, body) = match self {
            Call::Add => (
                "tools/call",
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},{META}}}}}"#
                ),
            ),
            Call::List => (
                "tools/list",
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#),
            ),
        };
        let mut req = Request::post("/mcp")
            .header(header::HOST, format!("127.0.0.1:{port}"))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Call::Add = self {
            req = req.header("mcp-name", "add");
        }
        req.body(Full::new(Bytes::from(body)))
            .expect("a valid request")
    }

    /// What a correct response body contains.
    fn expected(self) -> &'static str {
        match self {
            Call::Add => r#""text":"5""#,
            Call::List => r#""name":"add""#,
        }
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(port: u16) -> Result<Sender, String> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await;
    let stream = stream.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(tx)
}

/// Sends one request; `Err` unless the status is 200 (and, if `check`, the body is right).
async fn send(tx: &mut Sender, port: u16, call: Call, check: bool) -> Result<Bytes, String> {
    tx.ready().await.map_err(|e| format!("connection: {e}"))?;
    let resp = tx.send_request(call.request(port)).await;
    let resp = resp.map_err(|e| format!("request: {e}"))?;
    let status = resp.status();
    let body = resp.into_body().collect().await;
    let body = body.map_err(|e| format!("body: {e}"))?.to_bytes();
    let text = String::from_utf8_lossy(&body);
    if status != StatusCode::OK || (check && !text.contains(call.expected())) {
        return Err(format!("unexpected response: {status} {text}"));
    }
    Ok(body)
}

/// A server child process, killed when dropped.
struct ServerProcess {
    name: &'static str,
    port: u16,
    child: Child,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServerProcess {
    fn spawn(name: &'static str, env: &[(&str, &str)]) -> Result<ServerProcess, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(exe);
        cmd.args(["--serve", name]).envs(env.iter().copied());
        let child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn();
        let mut child = child.map_err(|e| format!("spawn {name}: {e}"))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        let _ = BufReader::new(stdout).read_line(&mut line);
        let port = line.trim().parse().ok();
        let mut server = ServerProcess {
            name,
            port: 0,
            child,
        };
        server.port = port.ok_or_else(|| format!("{name} server did not start"))?;
        Ok(server)
    }

    /// Server CPU time so far (user + system, all threads), in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()));
        let stat = stat.unwrap_or_default();
        // Fields after `(comm)`: state is field 3, utime 14 and stime 15.
        let rest = stat.rsplit_once(')').map_or("", |r| r.1);
        let fields: Vec<u64> = rest
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0)
    }
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux if that fails).
fn clock_ticks() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output();
    let out = out.ok().and_then(|o| String::from_utf8(o.stdout).ok());
    out.and_then(|s| s.trim().parse().ok()).unwrap_or(100.0)
}

/// The result of one load phase.
struct Phase {
    rps: f64,
    p50: Duration,
    p99: Duration,
    /// Server CPU per request, µs.
    cpu_us: f64,
    requests: u64,
    cpu_ticks: u64,
}

struct Settings {
    warmup: Duration,
    measure: Duration,
    tick_us: f64,
}

/// Runs `concurrency` closed-loop workers against `server` and measures after warm-up.
async fn phase(
    s: &Settings,
    server: &ServerProcess,
    call: Call,
    concurrency: usize,
) -> Result<Phase, String> {
    let start = Instant::now() + s.warmup;
    let until = start + s.measure;
    let port = server.port;
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            tokio::spawn(async move {
                let mut tx = connect(port).await?;
                let mut nanos = Vec::new();
                let mut first = true;
                loop {
                    let t = Instant::now();
                    if t >= until {
                        return Ok::<_, String>(nanos);
                    }
                    send(&mut tx, port, call, first).await?;
                    first = false;
                    if t >= start {
                        nanos.push(t.elapsed().as_nanos() as u64);
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep_until(start.into()).await;
    let cpu0 = server.cpu_ticks();
    let mut all = Vec::new();
    let mut errors = Vec::new();
    for w in workers {
        match w.await {
            Ok(Ok(nanos)) => all.extend(nanos),
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = server.cpu_ticks() - cpu0;
    if !errors.is_empty() || all.is_empty() {
        let first = errors
            .first()
            .map_or("no requests completed", String::as_str);
        return Err(format!(
            "{}: {} worker(s) failed: {first}",
            server.name,
            errors.len()
        ));
    }
    all.sort_unstable();
    let pct = |p: usize| Duration::from_nanos(all[(all.len() * p / 100).min(all.len() - 1)]);
    let requests = all.len() as u64;
    Ok(Phase {
        rps: requests as f64 / elapsed,
        p50: pct(50),
        p99: pct(99),
        cpu_us: cpu as f64 * s.tick_us / requests as f64,
        requests,
        cpu_ticks: cpu,
    })
}

fn us(d: Duration) -> String {
    format!("{}µs", d.as_micros())
}

fn row(p: &Phase) -> String {
    format!(
        "{:>7.0} req/s  p50 {:>6}  p99 {:>7}  cpu {:>5.1}µs/req",
        p.rps,
        us(p.p50),
        us(p.p99),
        p.cpu_us
    )
}

/// `≥`/`≤` target check, as text.
fn target(label: &str, value: f64, goal: f64, at_least: bool) -> String {
    let met = if at_least {
        value >= goal
    } else {
        value <= goal
    };
    let op = if at_least { "≥" } else { "≤" };
    let verdict = if met { "met" } else { "NOT met" };
    format!("  {label:<32} {op}{goal:.2}x  got {value:.2}x  {verdict}")
}

async fn bench() -> Result<(), String> {
    let secs = |var: &str, default: f64| {
        let v = std::env::var(var).ok().and_then(|v| v.parse::<f64>().ok());
        Duration::from_secs_f64(v.unwrap_or(default).max(0.1))
    };
    let s = Settings {
        warmup: secs("BENCH_WARMUP", 0.5),
        measure: secs("BENCH_SECS", 3.0),
        tick_us: 1e6 / clock_ticks(),
    };

    // Start ours, check it, and give its tools/list result to the raw server.
    let ours = ServerProcess::spawn("ours", &[])?;
    let mut tx = connect(ours.port).await?;
    let list = send(&mut tx, ours.port, Call::List, true).await?;
    let list: Value = serde_json::from_slice(&list).map_err(|e| e.to_string())?;
    let tools = list["result"]["tools"].as_array().map_or(0, Vec::len);
    if tools != TOOL_COUNT {
        return Err(format!(
            "ours: tools/list has {tools} tools, not {TOOL_COUNT}"
        ));
    }
    let result = list["result"].to_string();
    let raw = ServerProcess::spawn("raw", &[(TOOLS_LIST_ENV, &result)])?;
    let mut sizes = Vec::new();
    for server in [&ours, &raw] {
        let mut tx = connect(server.port).await?;
        for call in [Call::Add, Call::List] {
            let body = send(&mut tx, server.port, call, true).await;
            sizes.push(body.map_err(|e| format!("{}: {e}", server.name))?.len());
        }
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "mcp-runtime vs raw axum + serde_json over HTTP/1.1 on 127.0.0.1 \
         ({cores} cores shared by both servers and the load generator; {:.1}s warm-up, {:.1}s per phase)",
        s.warmup.as_secs_f64(),
        s.measure.as_secs_f64()
    );
    println!(
        "response bytes: tools/call ours {} raw {}; tools/list ours {} raw {}\n",
        sizes[0], sizes[2], sizes[1], sizes[3]
    );

    let plan = [
        ("tools/call", Call::Add, 1),
        ("tools/call", Call::Add, 16),
        ("tools/call", Call::Add, 128),
        ("tools/list", Call::List, 16),
    ];
    let mut results = Vec::new();
    for (label, call, c) in plan {
        let a = phase(&s, &ours, call, c).await?;
        let b = phase(&s, &raw, call, c).await?;
        println!(
            "{label}  c={c:<4} ours {} | raw {} | throughput {:.2}x  p99 {:.2}x",
            row(&a),
            row(&b),
            a.rps / b.rps,
            a.p99.as_secs_f64() / b.p99.as_secs_f64()
        );
        results.push((call, c, a, b));
    }

    // Server CPU per request over all phases of each method.
    for (label, kind) in [("tools/call", Call::Add), ("tools/list", Call::List)] {
        let (mut ours_t, mut ours_n, mut raw_t, mut raw_n) = (0, 0, 0, 0);
        for (call, _, a, b) in &results {
            if *call == kind {
                (ours_t, ours_n) = (ours_t + a.cpu_ticks, ours_n + a.requests);
                (raw_t, raw_n) = (raw_t + b.cpu_ticks, raw_n + b.requests);
            }
        }
        let ours_us = ours_t as f64 * s.tick_us / ours_n as f64;
        let raw_us = raw_t as f64 * s.tick_us / raw_n as f64;
        println!(
            "server CPU per request, {label}: ours {ours_us:.1}µs, raw {raw_us:.1}µs ({:.2}x)",
            ours_us / raw_us
        );
    }

    println!("\ntargets (for reference; not asserted):");
    for (call, c, a, b) in &results {
        let (tput, p99) = (a.rps / b.rps, a.p99.as_secs_f64() / b.p99.as_secs_f64());
        match (call, c) {
            (Call::Add, 16 | 128) => {
                println!(
                    "{}",
                    target(&format!("tools/call c={c} throughput"), tput, 0.85, true)
                );
                println!(
                    "{}",
                    target(&format!("tools/call c={c} p99"), p99, 1.5, false)
                );
            }
            (Call::List, _) => {
                println!(
                    "{}",
                    target(&format!("tools/list c={c} throughput"), tput, 0.9, true)
                );
            }
            _ => {}
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--serve") {
        let kind = args.get(i + 1).map_or("", String::as_str);
        return match serve(kind) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("--serve {kind}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    // The load generator: its own multi-thread runtime, default worker count.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match rt.block_on(bench()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            ExitCode::FAILURE
        }
    }
}

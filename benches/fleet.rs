//! What sharing state through Redis costs: the same server with its handles, single-use
//! request states and bus in Redis ("redis", a real `redis-server` this bench starts on a
//! free port) against in this process ("memory"), measured in the same run. Numbers are
//! printed, never asserted; the exit status is non-zero only when something fails.
//!
//! Rows, each at `BENCH_CONCURRENCY` (default 16) closed-loop workers for `BENCH_SECS`
//! (default 3) seconds per back end, split into rounds that alternate between them:
//!
//! - `tools/call cart_show`: a handle read (one Redis round trip) over HTTP.
//! - `tools/call cart_add`: a handle read and update (three Redis round trips).
//! - `tools/call whoami`: a tool that uses no shared state, on a server whose bus is in
//!   Redis: what the bus costs a request that does not use it.
//! - `redeem` and `task create+update+get`: the stores alone (no HTTP), for the floor.
//!
//! The server runs in this process on its own 2-thread runtime; the load generator on
//! another. Compare ratios, not absolutes (both share the machine's cores with Redis).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode, header};
use hyper_util::rt::TokioIo;
use mcp_runtime::store::redis::RedisStore;
use mcp_runtime::store::{
    HandleError, Handles, MemoryReplayStore, MemoryTaskStore, ReplayStore, TaskChange, TaskRecord,
    TaskStore,
};
use mcp_runtime::{Server, tool, tools};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Serialize, Deserialize)]
struct Cart {
    items: Vec<String>,
}

/// Starts a cart.
#[tool]
async fn cart_new(handles: Handles, item: String) -> Result<String, HandleError> {
    handles.mint(&Cart { items: vec![item] }).await
}

/// Shows a cart.
#[tool]
async fn cart_show(handles: Handles, cart: String) -> Result<String, HandleError> {
    let c: Cart = handles.get(&cart).await?;
    Ok(c.items.join(","))
}

/// Adds to a cart (kept small: the item replaces the last one).
#[tool]
async fn cart_add(handles: Handles, cart: String, item: String) -> Result<String, HandleError> {
    let mut c: Cart = handles.get(&cart).await?;
    c.items.truncate(1);
    c.items.push(item);
    handles.update(&cart, &c).await?;
    Ok(c.items.len().to_string())
}

/// Says who answered.
#[tool]
async fn whoami() -> &'static str {
    "me"
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct RedisServer(Child);
impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_redis() -> Result<(RedisServer, String), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("redis-server: {e} (apt-get install redis-server)"))?;
    let guard = RedisServer(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok((guard, format!("redis://127.0.0.1:{port}/")));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err("redis-server did not start".into())
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(port: u16) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    Ok(tx)
}

fn call_body(name: &str, args: serde_json::Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
}

async fn post(tx: &mut Sender, port: u16, name: &str, body: &str) -> Result<String, String> {
    tx.ready().await.map_err(|e| e.to_string())?;
    let req = Request::post(format!("http://127.0.0.1:{port}/mcp"))
        .header(header::HOST, format!("127.0.0.1:{port}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .body(Full::new(Bytes::from(body.to_owned())))
        .map_err(|e| e.to_string())?;
    let resp = tx.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&body.to_bytes()).into_owned();
    if status != StatusCode::OK || text.contains("\"isError\":true") || text.contains("\"error\"") {
        return Err(format!("{status} {text}"));
    }
    Ok(text)
}

/// Runs `op` on `c` workers for `secs`; operations per second.
async fn closed_loop<F, Fut>(c: usize, secs: f64, op: F) -> Result<f64, String>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let op = Arc::new(op);
    let done = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut workers = Vec::new();
    for w in 0..c {
        let (op, done, failed) = (op.clone(), done.clone(), failed.clone());
        workers.push(tokio::spawn(async move {
            while Instant::now() < end {
                match op(w).await {
                    Ok(()) => done.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        if failed.fetch_add(1, Ordering::Relaxed) == 0 {
                            eprintln!("failed: {e}");
                        }
                        0
                    }
                };
            }
        }));
    }
    for w in workers {
        w.await.map_err(|e| e.to_string())?;
    }
    if failed.load(Ordering::Relaxed) > 0 {
        return Err(format!(
            "{} operations failed",
            failed.load(Ordering::Relaxed)
        ));
    }
    Ok(done.load(Ordering::Relaxed) as f64 / secs)
}

/// Serves `server` on its own runtime; returns the port.
fn serve(server: Server) -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(listener).expect("listener");
            let _ = server.http().serve(l, std::future::pending()).await;
        });
    });
    Ok(port)
}

fn server(redis: Option<&RedisStore>) -> Result<Server, String> {
    let b = Server::builder("bench", "1.0").tools(tools![cart_new, cart_show, cart_add, whoami]);
    let b = match redis {
        Some(r) => b.handle_store(r.clone()).notification_bus(r.clone()),
        None => b,
    };
    b.build().map_err(|e| e.to_string())
}

async fn http_row(
    label: &str,
    ports: [u16; 2],
    tool: &'static str,
    c: usize,
    secs: f64,
    rounds: usize,
) -> Result<(), String> {
    let mut totals = [0.0f64; 2];
    for round in 0..rounds {
        for (k, &port) in ports.iter().enumerate() {
            // One cart per worker, made on this server.
            let mut senders = Vec::new();
            let mut carts = Vec::new();
            for _ in 0..c {
                let mut tx = connect(port).await?;
                let made = post(
                    &mut tx,
                    port,
                    "cart_new",
                    &call_body("cart_new", json!({"item": "a"})),
                )
                .await?;
                let v: serde_json::Value =
                    serde_json::from_str(&made).map_err(|e| e.to_string())?;
                carts.push(
                    v["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                );
                senders.push(tokio::sync::Mutex::new(tx));
            }
            let bodies: Vec<String> = carts
                .iter()
                .map(|cart| match tool {
                    "cart_show" => call_body(tool, json!({"cart": cart})),
                    "cart_add" => call_body(tool, json!({"cart": cart, "item": "b"})),
                    _ => call_body(tool, json!({})),
                })
                .collect();
            let senders = Arc::new(senders);
            let bodies = Arc::new(bodies);
            let warm = if round == 0 { 0.5 } else { 0.2 };
            let (s2, b2) = (senders.clone(), bodies.clone());
            closed_loop(c, warm, move |w| {
                let (s, b) = (s2.clone(), b2.clone());
                async move {
                    post(&mut *s[w].lock().await, port, tool, &b[w])
                        .await
                        .map(drop)
                }
            })
            .await?;
            let rate = closed_loop(c, secs / rounds as f64, move |w| {
                let (s, b) = (senders.clone(), bodies.clone());
                async move {
                    post(&mut *s[w].lock().await, port, tool, &b[w])
                        .await
                        .map(drop)
                }
            })
            .await?;
            totals[k] += rate / rounds as f64;
        }
    }
    println!(
        "{label:<34} memory {:>9.0}/s   redis {:>9.0}/s   redis/memory {:.2}x",
        totals[0],
        totals[1],
        totals[1] / totals[0]
    );
    Ok(())
}

async fn store_rows(redis: &RedisStore, c: usize, secs: f64) -> Result<(), String> {
    let memory: Arc<dyn ReplayStore> = Arc::new(MemoryReplayStore::with_capacity(50_000_000));
    let shared: Arc<dyn ReplayStore> = Arc::new(redis.clone());
    let mut rates = Vec::new();
    for store in [memory, shared] {
        let n = Arc::new(AtomicU64::new(0));
        rates.push(
            closed_loop(c, secs, move |w| {
                let (store, n) = (store.clone(), n.clone());
                async move {
                    let id = format!("b{w}-{}", n.fetch_add(1, Ordering::Relaxed));
                    match store.redeem(&id, Duration::from_secs(30)).await {
                        Ok(true) => Ok(()),
                        other => Err(format!("{other:?}")),
                    }
                }
            })
            .await?,
        );
    }
    println!(
        "{:<34} memory {:>9.0}/s   redis {:>9.0}/s   redis/memory {:.2}x",
        "redeem (single-use state)",
        rates[0],
        rates[1],
        rates[1] / rates[0]
    );
    // Capped far above what a run creates (tasks live 30 s), in both stores alike.
    let memory: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::with_capacity(50_000_000));
    let shared: Arc<dyn TaskStore> = Arc::new(redis.clone().max_tasks(50_000_000));
    let mut rates = Vec::new();
    for store in [memory, shared] {
        let n = Arc::new(AtomicU64::new(0));
        rates.push(
            closed_loop(c, secs, move |w| {
                let (store, n) = (store.clone(), n.clone());
                async move {
                    let id = format!("t{w}-{}", n.fetch_add(1, Ordering::Relaxed));
                    let t = TaskRecord::new(id.clone(), Duration::from_secs(30), None, None);
                    store.create(t).await.map_err(|e| e.to_string())?;
                    store
                        .update(&id, TaskChange::Complete(json!({"content": []})))
                        .await
                        .map_err(|e| e.to_string())?;
                    store
                        .get(&id)
                        .await
                        .map_err(|e| e.to_string())?
                        .ok_or("gone")?;
                    Ok(())
                }
            })
            .await?,
        );
    }
    println!(
        "{:<34} memory {:>9.0}/s   redis {:>9.0}/s   redis/memory {:.2}x",
        "task create+update+get",
        rates[0],
        rates[1],
        rates[1] / rates[0]
    );
    Ok(())
}

async fn bench() -> Result<(), String> {
    let (_redis_server, url) = start_redis()?;
    let redis = RedisStore::connect(&url).await.map_err(|e| e.to_string())?;
    let c = env_f64("BENCH_CONCURRENCY", 16.0) as usize;
    let secs = env_f64("BENCH_SECS", 3.0);
    let rounds = env_f64("BENCH_ROUNDS", 3.0).max(1.0) as usize;
    let memory = serve(server(None)?)?;
    let shared = serve(server(Some(&redis))?)?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!("fleet bench: {c} workers, {secs} s per back end and row, {rounds} rounds");
    http_row(
        "tools/call cart_show (1 get)",
        [memory, shared],
        "cart_show",
        c,
        secs,
        rounds,
    )
    .await?;
    http_row(
        "tools/call cart_add (get+get+set)",
        [memory, shared],
        "cart_add",
        c,
        secs,
        rounds,
    )
    .await?;
    http_row(
        "tools/call whoami (bus only)",
        [memory, shared],
        "whoami",
        c,
        secs,
        rounds,
    )
    .await?;
    store_rows(&redis, c, secs).await
}

fn main() -> ExitCode {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    match rt.block_on(bench()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fleet bench failed: {e}");
            ExitCode::FAILURE
        }
    }
}

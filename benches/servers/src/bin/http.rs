//! The http bench's servers (benches/http.rs), one per argument, each on an ephemeral
//! port of 127.0.0.1 it prints on stdout, until its stdin closes:
//! - `ours`: the ten tools of the bench on `server.http()`, no subscriber;
//! - `ours-logged`: the same with logging as it ships (`telemetry::init()`);
//! - `raw`: the baseline, a bare axum + serde_json handler answering `tools/call add` and
//!   `tools/list` (the list ours gave, handed over in `BENCH_TOOLS_LIST`).
//!
//! A binary of its own with mcp-runtime's default features, as a user's server is built,
//! not the bench binary, which the test suite's dev-dependencies give every optional
//! feature.

use axum::serve::ListenerExt;
use axum::{Json, Router, extract::State, routing::post};
use mcp_bench_servers::{add, echo};
use mcp_runtime::{Error, Server, tool, tools};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Greets someone by name.
#[tool]
async fn greet(name: String, #[arg(description = "Shout it")] excited: Option<bool>) -> String {
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
async fn divide(a: f64, b: f64) -> Result<String, Error> {
    let q = (b != 0.0).then(|| (a / b).to_string());
    q.ok_or_else(|| Error::new("division by zero"))
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
    let f = matches!(units, Some(Units::Fahrenheit));
    format!("{city}: {}, sunny", if f { "68°F" } else { "20°C" })
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
    let Query { text, limit, tags } = query;
    format!("no hits for {text:?} (limit {limit:?}, tags {tags:?})")
}

/// Totals the counts of tagged items.
#[tool]
async fn tag_counts(counts: BTreeMap<String, u32>) -> String {
    counts.values().sum::<u32>().to_string()
}

/// Sorts a list of integers.
#[tool]
async fn sort(mut values: Vec<i64>) -> mcp_runtime::Json<Vec<i64>> {
    values.sort_unstable();
    mcp_runtime::Json(values)
}

/// Returns the server's time.
#[tool]
async fn now() -> &'static str {
    "2026-07-28T00:00:00Z"
}

/// Where the parent hands the raw server its `tools/list` result (JSON).
const TOOLS_LIST_ENV: &str = "BENCH_TOOLS_LIST";

// ---------------------------------------------------------------------------------------
/// Both servers: multi-thread runtime, default worker count.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

/// Serves `kind` on an ephemeral port and prints the port on stdout. Exits when stdin
/// closes, so a child never outlives the benchmark.
fn serve(kind: &str) -> std::io::Result<()> {
    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    runtime()?.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        println!("{}", listener.local_addr()?.port());
        match kind {
            "ours" | "ours-logged" => {
                if kind == "ours-logged" {
                    // Logging as it ships: the stderr subscriber at its default filter
                    // (`info`), so the request span of every call is live.
                    mcp_runtime::telemetry::init();
                }
                let tools = tools![
                    add, echo, greet, sum, divide, weather, search, tag_counts, sort, now
                ];
                let server = Server::builder("bench", "1.0").tools(tools).build();
                let server = server.map_err(std::io::Error::other)?;
                server.http().serve(listener, std::future::pending()).await
            }
            "raw" => {
                let list = std::env::var(TOOLS_LIST_ENV).map_err(std::io::Error::other)?;
                let list: Value = serde_json::from_str(&list)?;
                let app = Router::new().route("/mcp", post(raw_handler));
                // Our transport sets TCP_NODELAY on accepted connections; so does this.
                let listener = listener.tap_io(|s| drop(s.set_nodelay(true)));
                axum::serve(listener, app.with_state(Arc::new(list))).await
            }
            _ => Err(std::io::Error::other(format!("unknown server {kind:?}"))),
        }
    })
}

/// The baseline: no validation beyond reading what it needs.
async fn raw_handler(State(list): State<Arc<Value>>, Json(req): Json<Value>) -> Json<Value> {
    let (key, value) = match req["method"].as_str() {
        Some("tools/call") => {
            let args = &req["params"]["arguments"];
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            let text = sum.to_string();
            (
                "result",
                json!({ "content": [{ "type": "text", "text": text }] }),
            )
        }
        Some("tools/list") => ("result", Value::clone(&list)),
        _ => (
            "error",
            json!({ "code": -32601, "message": "Method not found" }),
        ),
    };
    // Not `json!({ .., "result": value })`, which would deep-copy `value` once more.
    let mut reply = json!({ "jsonrpc": "2.0", "id": req["id"] });
    reply[key] = value;
    Json(reply)
}

fn main() -> ExitCode {
    mcp_bench_servers::main("mcp-bench-http", serve)
}

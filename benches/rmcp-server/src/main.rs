//! The benches' server written with rmcp, the official Rust SDK: the tools `add(a, b)`
//! (the sum as text) and `echo(text)` (the text), as in benches/stdio.rs, with rmcp's
//! `#[tool_router]`/`#[tool]` macros and default settings, the way its README shows.
//!
//! - no arguments, or `--serve stdio`: stdio, over `rmcp::transport::stdio()` (tokio's
//!   stdin and stdout), what rmcp's README serves;
//! - `--serve stdio-pipes`: stdio over `rmcp::transport::stdio_pipes()`, rmcp's
//!   non-blocking pipe transport;
//! - `--serve http` (the `http` feature, on by default): Streamable HTTP on `/mcp` of
//!   127.0.0.1 and an ephemeral port, printed on stdout; `StreamableHttpService` with
//!   `StreamableHttpServerConfig::default()` and a `LocalSessionManager`, in axum. The
//!   accepted connections get TCP_NODELAY, as the benches' own servers do. The process
//!   exits when its stdin closes, so it never outlives the bench.
//!
//! Both on `#[tokio::main]`'s multi-thread runtime.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Clone)]
struct Bench;

#[tool_router]
impl Bench {
    #[tool(description = "Adds two integers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Echoes the text back.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(name = "bench", version = "1.0")]
impl ServerHandler for Bench {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] | ["--serve", "stdio"] => "stdio",
        ["--serve", mode @ ("stdio-pipes" | "http")] => mode,
        _ => return Err("usage: rmcp-bench-server [--serve stdio|stdio-pipes|http]".into()),
    };
    let service = match mode {
        "stdio" => Bench.serve(rmcp::transport::stdio()).await?,
        "stdio-pipes" => Bench.serve(rmcp::transport::stdio_pipes()).await?,
        _ => return http().await,
    };
    service.waiting().await?;
    Ok(())
}

#[cfg(feature = "http")]
async fn http() -> Result<(), Box<dyn std::error::Error>> {
    use axum::serve::ListenerExt;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    use std::io::Read;

    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let service = StreamableHttpService::new(
        || Ok(Bench),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    println!("{}", listener.local_addr()?.port());
    let listener = listener.tap_io(|s| drop(s.set_nodelay(true)));
    axum::serve(listener, app).await?;
    Ok(())
}

#[cfg(not(feature = "http"))]
async fn http() -> Result<(), Box<dyn std::error::Error>> {
    Err("built without the `http` feature".into())
}

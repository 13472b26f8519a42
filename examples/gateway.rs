//! A gateway: one MCP server made of a mounted local module, proxied upstream servers and
//! middleware around all of it.
//!
//! ```text
//! UPSTREAM_STDIO="npx -y @modelcontextprotocol/server-filesystem /tmp" \
//! UPSTREAM_HTTP=http://127.0.0.1:9000/mcp PORT=8080 cargo run --example gateway
//! ```
//!
//! - `ops_*`: a local module (`ops_status`), mounted under `ops`;
//! - `fs_*`: the server started by `UPSTREAM_STDIO` (a command line), on its stdio;
//! - `remote_*`: the Streamable HTTP server at `UPSTREAM_HTTP`;
//! - around every call: a log line (`Timing`), a rate limit per caller and tool, and a cap
//!   on result size;
//! - the proxied lists followed: what an upstream adds or removes while the gateway runs
//!   shows in the gateway's lists (and its clients are told).

use mcp_runtime::config::RequestState;
use mcp_runtime::middleware::{RateLimit, SizeLimit, Timing};
use mcp_runtime::proxy::Upstream;
use mcp_runtime::{Server, tool, tools};
use std::time::Duration;

/// Says whether the gateway is up, and what it fronts.
#[tool(annotations(read_only_hint = true))]
async fn status() -> String {
    let fronts: Vec<&str> = [("UPSTREAM_STDIO", "fs"), ("UPSTREAM_HTTP", "remote")]
        .into_iter()
        .filter(|(var, _)| std::env::var_os(var).is_some())
        .map(|(_, ns)| ns)
        .collect();
    format!(
        "up; fronting {}",
        if fronts.is_empty() {
            "nothing".into()
        } else {
            fronts.join(", ")
        }
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_runtime::telemetry::init();
    let mut builder = Server::builder("gateway", env!("CARGO_PKG_VERSION"))
        .instructions("A gateway: ops_* are local, fs_* and remote_* are proxied servers.")
        .mount("ops", Server::builder("ops", "1.0").tools(tools![status]));
    let mut upstreams = Vec::new();
    if let Ok(line) = std::env::var("UPSTREAM_STDIO") {
        let mut words = line.split_whitespace();
        let program = words.next().ok_or("UPSTREAM_STDIO is empty")?;
        let upstream = Upstream::stdio(program, words).await?;
        builder = builder.mount("fs", upstream.items().await?);
        upstreams.push(("fs", upstream));
    }
    if let Ok(url) = std::env::var("UPSTREAM_HTTP") {
        let upstream = Upstream::http(&url).await?;
        builder = builder.mount("remote", upstream.items().await?);
        upstreams.push(("remote", upstream));
    }
    // Proxied tools may ask for input (their questions pass through): one instance here;
    // a fleet sets MCP_REQUEST_STATE_KEYS, which takes precedence.
    let server = builder
        .request_state(RequestState::single_instance())
        .layer(Timing)
        .layer(RateLimit::new(120, Duration::from_secs(60)).per_item())
        .layer(SizeLimit::new(1 << 20))
        .build()?;
    let _following: Vec<_> = upstreams
        .iter()
        .map(|(ns, up)| up.follow(&server, *ns))
        .collect();
    let port = std::env::var("PORT").unwrap_or_else(|_| "8080".into());
    server.serve_http(format!("127.0.0.1:{port}")).await?;
    Ok(())
}

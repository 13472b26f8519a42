//! Serves stdio by default; `--http 127.0.0.1:8080` serves Streamable HTTP at
//! `http://127.0.0.1:8080/mcp` instead.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs to stderr (filtered by RUST_LOG): stdout carries the protocol on stdio.
    mcp_runtime::telemetry::init();
    let server = {{crate_name}}::server()?;
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => {
            eprintln!("serving http://{addr}/mcp");
            server.serve_http(addr.as_str()).await?;
        }
        (None, _) => server.serve_stdio().await?,
        _ => return Err("usage: {{project-name}} [--http ADDR]".into()),
    }
    Ok(())
}

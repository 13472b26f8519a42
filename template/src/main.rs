//! Serves stdio by default; `--http 127.0.0.1:8080` serves Streamable HTTP at
//! `http://127.0.0.1:8080/mcp` instead.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs to stderr (filtered by RUST_LOG): stdout carries the protocol on stdio.
    mcp_runtime::telemetry::init();
    let server = {{crate_name}}::server()?;
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => {
            // Many clients at once: a worker per core.
            let runtime = tokio::runtime::Runtime::new()?;
            eprintln!("serving http://{addr}/mcp");
            runtime.block_on(server.serve_http(addr.as_str()))?;
        }
        (None, _) => {
            // One client, one pipe: a single-threaded runtime answers each message with
            // no second worker to wake (about a third less CPU per round trip; see
            // benches/stdio.rs of mcp-runtime). Handlers still run concurrently; move
            // long CPU-bound work to `tokio::task::spawn_blocking`.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(server.serve_stdio())?;
        }
        _ => return Err("usage: {{project-name}} [--http ADDR]".into()),
    }
    Ok(())
}

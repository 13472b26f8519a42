//! The fixture surface the official MCP conformance suite calls, written with our macros.
//!
//! `cargo run --example conformance` serves Streamable HTTP on `127.0.0.1:$PORT/mcp`
//! (`PORT` from the environment, default 3000); `--stdio` serves stdio instead.
//!
//! Tool names and texts follow the suite's reference fixture exactly: the suite matches
//! on them. Later issues add their fixtures (resources, prompts, MRTR, headers, listen).

use mcp_runtime::{Content, Context, Logger, Progress, Server, ToolError, tool, tools};
use std::time::Duration;

const PNG: &[u8] = include_bytes!("assets/pixel.png");
const WAV: &[u8] = include_bytes!("assets/tone.wav");

/// Returns a simple text response.
#[tool]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a 1x1 PNG image.
#[tool]
async fn test_image_content() -> Content {
    Content::image(PNG, "image/png")
}

/// Returns a short WAV clip.
#[tool]
async fn test_audio_content() -> Content {
    Content::audio(WAV, "audio/wav")
}

/// Returns an embedded text resource.
#[tool]
async fn test_embedded_resource() -> Content {
    Content::embedded_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded resource together.
#[tool]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(PNG, "image/png"),
        Content::embedded_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Reports progress three times (0, 50, 100 of 100), then answers.
#[tool]
async fn test_tool_with_progress(progress: Progress) -> &'static str {
    for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress.report(p, Some(100.0), Some(&format!("step {}", i + 1)));
    }
    "Progress test completed."
}

/// Sends three log messages, then answers (only when the request sets a log level).
#[tool]
async fn test_tool_with_logging(log: Logger) -> &'static str {
    for msg in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        log.info(msg);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Logging test completed."
}

/// Logs one message when the request sets `io.modelcontextprotocol/logLevel`; silent otherwise.
#[tool]
async fn test_logging_tool(log: Logger) -> &'static str {
    log.info("test_logging_tool ran");
    "Logging tool completed."
}

/// Always fails with a tool execution error.
#[tool]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Needs the client's `sampling` capability; without it the call fails with -32021.
#[tool]
async fn test_missing_capability(cx: Context) -> Result<&'static str, ToolError> {
    cx.require_capability("sampling")?;
    Ok("Success")
}

/// Streams one progress notification, then the result; never a request to the client.
#[tool]
async fn test_streaming_elicitation(progress: Progress) -> &'static str {
    progress.report(1.0, Some(1.0), Some("working"));
    "Streaming test completed."
}

fn server() -> Server {
    Server::builder("mcp-runtime-conformance", env!("CARGO_PKG_VERSION"))
        .instructions("Fixture server for the MCP conformance suite.")
        .tools(tools![
            test_simple_text,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_tool_with_progress,
            test_tool_with_logging,
            test_logging_tool,
            test_error_handling,
            test_missing_capability,
            test_streaming_elicitation,
        ])
        .build()
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        })
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = server();
    if std::env::args().any(|a| a == "--stdio") {
        return server.serve_stdio().await;
    }
    let port = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(3000);
    server.serve_http(("127.0.0.1", port)).await
}

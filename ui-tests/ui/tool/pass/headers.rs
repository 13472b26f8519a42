use mcp_runtime::{Arguments, Server, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nested {
    depth: u8,
}

/// Every header-capable type.
#[tool(inline_refs)]
async fn mirrored(
    #[arg(header = "Region")] region: String,
    #[arg(header = "Limit", description = "At most this many")] limit: Option<i32>,
    #[arg(header = "Small")] small: u8,
    #[arg(header = "Flag")] flag: bool,
    #[arg(header = "X-Trace_id.v2")] trace: Option<String>,
    nested: Option<Nested>,
) -> String {
    format!("{region}{limit:?}{small}{flag}{trace:?}{}", nested.map_or(0, |n| n.depth))
}

/// A hand-written schema with an annotation, checked when the server starts.
#[tool(input_schema = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#)]
async fn hand_written(args: Arguments) -> String {
    format!("{}", args.0.len())
}

fn main() {
    Server::builder("t", "1").tools(tools![mirrored, hand_written]).build().unwrap();
}

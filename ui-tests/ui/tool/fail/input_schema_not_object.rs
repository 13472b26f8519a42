use mcp_runtime::tool;

/// Anything.
#[tool(input_schema = r#"{"type": "array"}"#)]
async fn anything() -> &'static str {
    ""
}

fn main() {}

use mcp_runtime::tool;

/// Anything.
#[tool(input_schema = r#"{"type": "object", "properties": {"#)]
async fn anything() -> &'static str {
    ""
}

fn main() {}

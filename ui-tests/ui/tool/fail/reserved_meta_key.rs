use mcp_runtime::tool;

/// Adds.
#[tool(meta = r#"{"io.modelcontextprotocol/team": "x"}"#)]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

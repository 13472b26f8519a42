use mcp_runtime::tool;

/// Adds.
#[tool(icon(src = "http://example.com/add.png"))]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

use mcp_runtime::tool;

/// Adds.
#[tool(icon(src = "https://example.com/add.png", theme = "blue"))]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

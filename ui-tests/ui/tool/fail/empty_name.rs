use mcp_runtime::tool;

/// Adds.
#[tool(name = "")]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

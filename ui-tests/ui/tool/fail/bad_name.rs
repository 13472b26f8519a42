use mcp_runtime::tool;

/// Adds.
#[tool(name = "add numbers")]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

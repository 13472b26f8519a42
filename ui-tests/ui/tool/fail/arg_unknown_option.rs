use mcp_runtime::tool;

/// Adds.
#[tool]
async fn add(#[arg(desc = "first")] a: i64) -> String {
    a.to_string()
}

fn main() {}

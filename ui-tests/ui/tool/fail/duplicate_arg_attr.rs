use mcp_runtime::tool;

/// Adds.
#[tool]
async fn add(#[arg(description = "first")] #[arg(description = "again")] a: i64) -> String {
    a.to_string()
}

fn main() {}

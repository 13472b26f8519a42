use mcp_runtime::tool;

/// Adds.
#[tool]
async fn add(#[arg(name = "")] a: i64) -> String {
    a.to_string()
}

fn main() {}

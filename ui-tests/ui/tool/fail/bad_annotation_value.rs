use mcp_runtime::tool;

/// Adds.
#[tool(annotations(read_only_hint = "yes"))]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

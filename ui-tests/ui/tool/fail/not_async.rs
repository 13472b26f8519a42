use mcp_runtime::tool;

/// Adds.
#[tool]
fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn main() {}

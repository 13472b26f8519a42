use mcp_runtime::tool;

/// Sums what it is given.
#[tool]
async fn sum(a: i64, _: ...) -> String {
    a.to_string()
}

fn main() {}

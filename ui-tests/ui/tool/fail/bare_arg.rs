use mcp_runtime::tool;

/// Adds.
#[tool]
async fn add(#[arg] a: i64, #[mcp_runtime::arg(name = "second", bogus = 1)] b: i64) -> String {
    (a + b).to_string()
}

fn main() {}

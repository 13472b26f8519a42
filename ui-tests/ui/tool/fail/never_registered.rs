#![deny(dead_code)]
use mcp_runtime::tool;

// A tool that no `tools![..]` registers is dead code, like any unused function.
/// Adds.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn main() {}

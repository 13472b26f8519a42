use mcp_runtime::tool;

/// Declared, never defined.
#[tool]
async fn declared(a: i64) -> String;

fn main() {}

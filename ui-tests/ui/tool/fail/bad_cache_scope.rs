use mcp_runtime::tool;

/// Adds.
#[tool(ttl_ms = 100, cache_scope = "shared")]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

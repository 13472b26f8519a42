use mcp_runtime::tool;

/// Three mistakes, three errors.
#[tool(name = "bad name", cache_scope = "nobody")]
fn add(_: i64) -> String {
    String::new()
}

fn main() {}

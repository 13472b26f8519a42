use mcp_runtime::tool;

/// Adds.
#[tool(meta = r#"["com.example/team", "search"]"#)]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

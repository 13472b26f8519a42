use mcp_runtime::tool;

#[tool(description = "  ")]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

use mcp_runtime::tool;

#[tool]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

use mcp_runtime::tool;

/// Greets.
#[tool]
async fn greet(name: &str) -> String {
    format!("hi {name}")
}

fn main() {}

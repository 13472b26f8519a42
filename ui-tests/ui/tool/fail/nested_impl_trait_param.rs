use mcp_runtime::tool;

/// Greets.
#[tool]
async fn greet(name: Option<impl Into<String>>, pair: (u8, impl ToString)) -> String {
    format!("hi {:?} {}", name.map(Into::into), pair.1.to_string())
}

fn main() {}

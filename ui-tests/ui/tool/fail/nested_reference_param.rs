use mcp_runtime::tool;

/// Greets.
#[tool]
async fn greet(name: Option<&str>, tags: Vec<&str>, pair: (u8, &str)) -> String {
    format!("hi {name:?} {tags:?} {pair:?}")
}

fn main() {}

use mcp_runtime::{prompt, tool};

/// Adds.
#[tool]
async fn add(#[arg(name = "x")] a: i64, x: i64) -> String {
    (a + x).to_string()
}

/// Greets.
#[prompt]
async fn greet(#[arg(name = "a")] b: String, a: String) -> String {
    format!("{a} {b}")
}

fn main() {}

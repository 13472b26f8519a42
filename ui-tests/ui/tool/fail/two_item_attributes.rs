use mcp_runtime::{prompt, tool};

/// Echoes.
#[tool]
#[tool(name = "other")]
async fn echo(text: String) -> String {
    text
}

/// Greets.
#[tool]
#[prompt]
async fn greet(name: String) -> String {
    name
}

fn main() {}

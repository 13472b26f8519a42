use mcp_runtime::prompt;

/// Greets.
#[prompt(name = "say hello")]
async fn greet() -> &'static str {
    "hi"
}

fn main() {}

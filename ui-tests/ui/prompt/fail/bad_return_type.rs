use mcp_runtime::{prompt, prompts};

/// Greets.
#[prompt]
async fn greet() -> u32 {
    1
}

fn main() {
    let _ = prompts![greet];
}

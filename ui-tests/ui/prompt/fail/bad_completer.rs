use mcp_runtime::{prompt, prompts};

fn names(_: u32) -> Vec<String> {
    Vec::new()
}

/// Greets.
#[prompt]
async fn greet(#[arg(complete = names)] name: String) -> String {
    name
}

fn main() {
    let _ = prompts![greet];
}

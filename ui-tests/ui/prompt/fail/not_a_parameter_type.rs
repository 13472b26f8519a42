use mcp_runtime::{prompt, prompts};

struct Style;

/// Greets.
#[prompt]
async fn greet(style: Style) -> &'static str {
    let _ = style;
    "hi"
}

fn main() {
    let _ = prompts![greet];
}

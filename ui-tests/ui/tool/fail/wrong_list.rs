use mcp_runtime::{prompt, prompts, resource, tool, tools};

/// A note, by number.
#[resource("notes://{id}")]
async fn note(id: u64) -> String {
    id.to_string()
}

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Greets.
#[prompt]
async fn greet() -> &'static str {
    "hello"
}

fn main() {
    let _ = tools![add, note];
    let _ = prompts![greet, add];
}

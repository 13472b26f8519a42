use mcp_runtime::{Form, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Confirm {
    ok: bool,
}

/// Asks twice under one key.
#[tool]
#[needs_input]
async fn ask(
    #[input(elicit = "First?", key = "q")] first: Confirm,
    #[input(elicit = "Second?", key = "q")] second: Confirm,
) -> String {
    format!("{} {}", first.ok, second.ok)
}

fn main() {}

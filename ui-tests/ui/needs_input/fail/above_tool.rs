use mcp_runtime::{Form, needs_input, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Confirm {
    ok: bool,
}

/// Asks.
#[needs_input]
#[tool]
async fn ask(#[input(elicit = "Sure?")] confirm: Confirm) -> String {
    confirm.ok.to_string()
}

fn main() {}

use mcp_runtime::{Form, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Confirm {
    ok: bool,
}

/// Asks.
#[tool]
async fn ask(#[input(elicit = "Sure?")] confirm: Confirm) -> String {
    confirm.ok.to_string()
}

fn main() {}

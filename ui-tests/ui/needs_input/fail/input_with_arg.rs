use mcp_runtime::{Form, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Sure {
    ok: bool,
}

/// Asks, and describes the answer as if it were an argument.
#[tool]
#[mcp_runtime::needs_input]
async fn ask(
    #[arg(description = "Sure?")]
    #[input(elicit = "Sure?")]
    sure: Sure,
) -> String {
    sure.ok.to_string()
}

fn main() {}

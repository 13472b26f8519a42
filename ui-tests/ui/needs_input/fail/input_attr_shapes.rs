use mcp_runtime::{Elicited, Form, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Confirm {
    ok: bool,
}

/// `#[input]` twice on one parameter, and alone on another.
#[tool]
#[needs_input]
async fn ask(
    #[input(elicit = "Sure?")]
    #[input(roots)]
    a: Elicited<Confirm>,
    #[input] b: Elicited<Confirm>,
) -> String {
    let _ = (a, b);
    String::new()
}

fn main() {}

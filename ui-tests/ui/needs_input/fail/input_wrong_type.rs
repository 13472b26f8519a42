use mcp_runtime::{Elicited, Form, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Login {
    user: String,
}

/// A URL elicitation answers with no content: its parameter is `Elicited<()>`.
#[tool]
#[needs_input]
async fn sign_in(
    #[input(url = "https://example.com/login", message = "Sign in")] login: Elicited<Login>,
) -> String {
    login.accepted().map(|l| l.user).unwrap_or_default()
}

/// Each kind of input with a type it cannot be.
#[tool]
#[needs_input]
async fn gather(
    #[input(sample = "Say hi.", max_tokens = 8)] greeting: String,
    #[input(roots)] roots: Vec<String>,
    #[input(url = "https://example.com/pay", message = "Pay")] paid: bool,
) -> String {
    format!("{greeting} {roots:?} {paid}")
}

fn main() {
    let _ = tools![sign_in, gather];
}

use mcp_runtime::{tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
}

/// The form type does not derive `Form`.
#[tool]
#[needs_input]
async fn ask(#[input(elicit = "Sure?")] confirm: Confirm) -> String {
    confirm.ok.to_string()
}

fn main() {
    let _ = tools![ask];
}

use mcp_runtime::{Elicited, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
}

/// `Elicited<T>` of a type that does not derive `Form`: rustc reports the parameter's trait
/// (`ElicitParam`) and points at its impl for `Elicited<T>`, which needs `T: ElicitForm`.
#[tool]
#[needs_input]
async fn ask(#[input(elicit = "Sure?")] confirm: Elicited<Confirm>) -> String {
    confirm
        .accepted()
        .map(|c| c.ok.to_string())
        .unwrap_or_default()
}

fn main() {
    let _ = tools![ask];
}

use mcp_runtime::{Form, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Sure {
    ok: bool,
}

/// Deletes a file after the user confirms.
#[tool]
#[mcp_runtime::needs_input]
async fn delete(path: String, force: bool, #[input(elicit = "Delete {pth}?")] sure: Sure) -> String {
    format!("{path} {force} {}", sure.ok)
}

fn main() {}

use mcp_runtime::{Form, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Sure {
    ok: bool,
}

/// Deletes a file, once sure.
#[tool]
#[mcp_runtime::needs_input]
async fn delete(path: Option<String>, #[input(elicit = "Delete {path}?")] sure: Sure) -> String {
    format!("{path:?} {}", sure.ok)
}

fn main() {}

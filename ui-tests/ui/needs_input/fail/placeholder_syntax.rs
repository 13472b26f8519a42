use mcp_runtime::{Form, tool};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Sure {
    ok: bool,
}

/// Unclosed placeholder.
#[tool]
#[mcp_runtime::needs_input]
async fn open(path: String, #[input(elicit = "Delete {path?")] sure: Sure) -> String {
    format!("{path} {}", sure.ok)
}

/// A lone closing brace.
#[tool]
#[mcp_runtime::needs_input]
async fn close(path: String, #[input(elicit = "Delete path}?")] sure: Sure) -> String {
    format!("{path} {}", sure.ok)
}

/// Positional placeholders, with no other parameter.
#[tool]
#[mcp_runtime::needs_input]
async fn positional(#[input(elicit = "Delete {}?")] sure: Sure) -> String {
    sure.ok.to_string()
}

/// Inserts another input of the same round.
#[tool]
#[mcp_runtime::needs_input]
async fn same_round(
    #[input(elicit = "First?")] first: Sure,
    #[input(elicit = "After {first}?")] second: Sure,
) -> String {
    format!("{} {}", first.ok, second.ok)
}

fn main() {}

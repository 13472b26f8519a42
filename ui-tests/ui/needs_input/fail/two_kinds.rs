use mcp_runtime::tool;

/// Asks two things in one parameter.
#[tool]
#[needs_input]
async fn ask(#[input(elicit = "Sure?", roots)] roots: Vec<serde_json::Value>) -> String {
    roots.len().to_string()
}

fn main() {}

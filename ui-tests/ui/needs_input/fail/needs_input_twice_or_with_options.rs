use mcp_runtime::tool;

/// `#[needs_input]` twice.
#[tool]
#[needs_input]
#[needs_input]
async fn twice(#[input(roots)] roots: Vec<serde_json::Value>) -> String {
    format!("{roots:?}")
}

/// `#[needs_input]` with options.
#[tool]
#[needs_input(elicit = "Sure?")]
async fn options(#[input(roots)] roots: Vec<serde_json::Value>) -> String {
    format!("{roots:?}")
}

fn main() {}

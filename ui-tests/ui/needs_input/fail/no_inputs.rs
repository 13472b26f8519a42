use mcp_runtime::tool;

/// Declares input but asks nothing.
#[tool]
#[needs_input]
async fn ask(name: String) -> String {
    name
}

fn main() {}

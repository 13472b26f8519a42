use mcp_runtime::tool;

/// Greets.
#[tool]
async fn greet(#[doc = concat!("The ", "name")] name: String) -> String {
    name
}

fn main() {}

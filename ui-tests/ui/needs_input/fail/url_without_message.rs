use mcp_runtime::{Elicited, tool};

/// Approves a deployment.
#[tool]
#[mcp_runtime::needs_input]
async fn approve(#[input(url = "https://example.com/approve")] approval: Elicited<()>) -> String {
    let _ = approval;
    String::new()
}

fn main() {}

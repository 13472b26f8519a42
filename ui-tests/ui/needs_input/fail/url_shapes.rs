use mcp_runtime::{Elicited, tool};

/// URLs a browser would misread, or that name no site.
#[tool]
#[mcp_runtime::needs_input]
async fn connect(
    #[input(url = "https://example.com\\connect", message = "Connect?")] a: Elicited<()>,
    #[input(url = "https:///connect", message = "Connect?")] b: Elicited<()>,
) -> String {
    let _ = (a, b);
    String::new()
}

fn main() {}

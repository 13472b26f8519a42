use mcp_runtime::{Elicited, Error, tool};

/// Connects a service.
#[tool]
#[mcp_runtime::needs_input]
async fn connect(
    host: String,
    #[input(url = "https://{host}/connect", message = "Connect?")] a: Elicited<()>,
    #[input(url = "not a url", message = "Connect?", key = "b")] b: Elicited<()>,
    #[input(url = "https://example.com/{hots}", message = "Connect?", key = "c")] c: Elicited<()>,
) -> Result<String, Error> {
    let _ = (a, b, c);
    Ok(host)
}

fn main() {}

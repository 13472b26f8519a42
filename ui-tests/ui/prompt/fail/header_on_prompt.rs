use mcp_runtime::prompt;

/// Greets.
#[prompt]
async fn greet(#[arg(header = "Name")] name: String) -> String {
    name
}

fn main() {}

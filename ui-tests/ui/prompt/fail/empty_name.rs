use mcp_runtime::prompt;

/// Greets.
#[prompt(name = "")]
async fn greet(who: String) -> String {
    who
}

fn main() {}

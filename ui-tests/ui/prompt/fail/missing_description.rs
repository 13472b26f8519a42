use mcp_runtime::prompt;

#[prompt]
async fn greet(name: String) -> String {
    format!("Greet {name}")
}

fn main() {}

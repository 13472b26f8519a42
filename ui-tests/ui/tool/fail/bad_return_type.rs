use mcp_runtime::{tool, tools};

/// Returns a number.
#[tool]
async fn answer() -> u64 {
    42
}

fn main() {
    let _ = tools![answer];
}

use mcp_runtime::{tool, tools};

/// Looks up a big id.
#[tool]
async fn lookup(#[arg(header = "Id")] id: u64) -> String {
    id.to_string()
}

fn main() {
    let _ = tools![lookup];
}

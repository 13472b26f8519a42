use mcp_runtime::tool;

/// Adds.
#[tool]
async fn add(a: u8, #[cfg(any())] b: u8) -> String {
    a.to_string()
}

fn main() {}

use mcp_runtime::tool;

/// Adds.
#[tool]
async fn add(__call: u8, __mcp: u8) -> String {
    (__call + __mcp).to_string()
}

fn main() {}

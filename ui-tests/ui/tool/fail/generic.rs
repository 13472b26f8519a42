use mcp_runtime::tool;

/// Echoes.
#[tool]
async fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

fn main() {}

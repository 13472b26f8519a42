use mcp_runtime::tool;

/// Shows.
#[tool]
async fn show(value: impl ToString) -> String {
    value.to_string()
}

fn main() {}

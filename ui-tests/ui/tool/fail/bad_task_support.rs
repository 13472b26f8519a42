use mcp_runtime::tool;

/// Exports everything.
#[tool(task = "always")]
async fn export() -> String {
    "done".into()
}

fn main() {}

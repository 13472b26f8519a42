use mcp_runtime::tool;

/// Mirrors a parameter into a header without a name.
#[tool]
async fn route(#[arg(header = "")] region: String) -> String {
    region
}

fn main() {}

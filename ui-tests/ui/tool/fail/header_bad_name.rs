use mcp_runtime::tool;

/// Queries.
#[tool]
async fn query(#[arg(header = "My Region")] region: String) -> String {
    region
}

fn main() {}

use mcp_runtime::tool;

/// Queries.
#[tool]
async fn query(#[arg(header = "Region")] region: String, #[arg(header = "REGION")] zone: String) -> String {
    format!("{region}{zone}")
}

fn main() {}

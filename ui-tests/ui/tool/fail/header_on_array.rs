use mcp_runtime::{tool, tools};

/// Tags.
#[tool]
async fn tag(#[arg(header = "Tags")] tags: Vec<String>) -> String {
    tags.join(",")
}

fn main() {
    let _ = tools![tag];
}

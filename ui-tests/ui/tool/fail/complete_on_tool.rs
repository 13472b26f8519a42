use mcp_runtime::tool;

async fn cities(_: String) -> Vec<String> {
    Vec::new()
}

/// Weather.
#[tool]
async fn weather(#[arg(complete = cities)] city: String) -> String {
    city
}

fn main() {}

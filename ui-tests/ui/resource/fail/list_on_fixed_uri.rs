use mcp_runtime::resource;

use mcp_runtime::Resource;

async fn all() -> Vec<Resource> {
    Vec::new()
}

/// The configuration.
#[resource("config://app", list = all)]
async fn config() -> &'static str {
    "{}"
}

fn main() {}

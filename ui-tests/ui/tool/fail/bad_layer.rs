use mcp_runtime::tool;

/// Says hi.
#[tool(layer = 42)]
async fn hi() -> &'static str {
    "hi"
}

fn main() {}

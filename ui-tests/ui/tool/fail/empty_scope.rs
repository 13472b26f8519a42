use mcp_runtime::tool;

/// Reads a file.
#[tool(scopes(""))]
async fn read(path: String) -> String {
    path
}

fn main() {}

use mcp_runtime::tool;

/// Writes a file.
#[tool(scopes("files:write", "files write", "files:write"))]
async fn write(path: String) -> String {
    path
}

fn main() {}

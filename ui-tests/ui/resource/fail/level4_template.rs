use mcp_runtime::resource;

/// Files.
#[resource("file:///{path*}")]
async fn file(path: String) -> String {
    path
}

fn main() {}

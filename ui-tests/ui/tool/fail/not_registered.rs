use mcp_runtime::{Server, tools};

// A function without `#[tool]` has no definition for `tools![..]` to collect.
/// Lists a directory.
async fn list_dir(path: String) -> String {
    path
}

fn main() {
    let _ = Server::builder("x", "1").tools(tools![list_dir]).build();
}

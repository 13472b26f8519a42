use mcp_runtime::{SafePath, resource};

/// A file under the docs folder.
#[resource("file:///docs/{path}")]
async fn doc(path: SafePath) -> String {
    path.as_path().display().to_string()
}

fn main() {}

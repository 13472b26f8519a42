use mcp_runtime::{Context, resource};

/// A note.
#[resource("notes://{id}")]
async fn note(id: u64, #[arg(description = "the request")] cx: Context) -> String {
    let _ = cx;
    id.to_string()
}

fn main() {}

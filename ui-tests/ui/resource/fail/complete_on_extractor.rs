use mcp_runtime::resource;

use mcp_runtime::Context;

async fn ids(_: String) -> Vec<String> {
    Vec::new()
}

/// A note.
#[resource("notes://{id}")]
async fn note(id: u64, #[arg(complete = ids)] cx: Context) -> String {
    let _ = cx;
    id.to_string()
}

fn main() {}

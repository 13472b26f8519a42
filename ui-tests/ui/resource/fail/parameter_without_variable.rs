use mcp_runtime::{resource, resources};

/// A note.
#[resource("notes://{id}")]
async fn note(id: u64, page: u32) -> String {
    format!("{id} {page}")
}

fn main() {
    let _ = resources![note];
}

use mcp_runtime::resource;

/// A note.
#[resource("notes://{id")]
async fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}

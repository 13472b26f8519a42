use mcp_runtime::resource;

/// A note.
#[resource("notes://{id}")]
async fn note(#[arg(description = "The note's id")] id: u64) -> String {
    id.to_string()
}

fn main() {}

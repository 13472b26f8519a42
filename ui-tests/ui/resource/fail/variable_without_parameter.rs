use mcp_runtime::resource;

/// A part of a note.
#[resource("notes://{id}/{part}")]
async fn note_part(id: u64) -> String {
    id.to_string()
}

fn main() {}

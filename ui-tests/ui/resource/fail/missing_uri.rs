use mcp_runtime::resource;

/// A note.
#[resource(name = "note")]
async fn note() -> String {
    String::new()
}

fn main() {}

use mcp_runtime::resource;

/// A note.
#[resource("notes://today", mimetype = "text/plain")]
async fn today() -> &'static str {
    ""
}

fn main() {}

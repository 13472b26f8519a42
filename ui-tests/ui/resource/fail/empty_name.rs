use mcp_runtime::resource;

/// A note.
#[resource("notes://today", name = " ")]
async fn today() -> &'static str {
    ""
}

fn main() {}

use mcp_runtime::resource;

/// A note.
#[resource("notes://today", annotations(audience(robot), priority = 2.0, last_modified = "yesterday"))]
async fn today() -> &'static str {
    ""
}

fn main() {}

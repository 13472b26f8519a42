use mcp_runtime::{Server, resource, resources};

/// One.
#[resource("x://same")]
async fn first() -> String {
    "1".into()
}

/// Two, under another name but the same URI.
#[resource("x://same", name = "other")]
async fn second() -> String {
    "2".into()
}

fn main() {
    let _ = Server::builder("x", "1").resources(resources![first, second]).build();
}

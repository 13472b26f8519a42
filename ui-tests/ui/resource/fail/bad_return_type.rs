use mcp_runtime::{resource, resources};

/// A counter.
#[resource("counter://value")]
async fn counter() -> u64 {
    1
}

fn main() {
    let _ = resources![counter];
}

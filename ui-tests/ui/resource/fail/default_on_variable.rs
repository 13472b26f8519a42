use mcp_runtime::{Context, resource, resources};

/// A note: the URI gives its id, and the context is no argument.
#[resource("notes://{id}")]
async fn note(#[arg(default = 1)] id: u64, #[arg(default)] ctx: Context) -> String {
    let _ = ctx;
    format!("{id}")
}

fn main() {
    let _ = resources![note];
}

use mcp_runtime::{Server, tool, tools};

// A body that does not parse gets rustc's own error, and nothing else: the companion is
// still there, so the registration below resolves.
/// Adds.
#[tool]
async fn add(a: i64, b: i64) -> String {
    let sum = a + ;
    sum.to_string()
}

fn main() {
    let _ = Server::builder("x", "1").tools(tools![add]).build();
}

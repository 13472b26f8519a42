use mcp_runtime::{Server, tool, tools};

/// Adds.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

mod other {
    /// Adds too.
    #[mcp_runtime::tool(name = "add")]
    pub async fn plus(a: i64, b: i64) -> String {
        (a + b).to_string()
    }
}

fn main() {
    let _ = Server::builder("x", "1").tools(tools![add, other::plus]).build();
}

use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    /// Adds.
    #[tool(crate = "mcp_runtime")]
    async fn add(&self, a: i64, b: i64) -> String {
        (a + b).to_string()
    }
}

fn main() {}

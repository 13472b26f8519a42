use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    /// Adds.
    #[tool]
    async fn add(&self, a: i64) -> String {
        a.to_string()
    }

    /// Also adds.
    #[tool(name = "add")]
    async fn plus(&self, a: i64) -> String {
        a.to_string()
    }
}

fn main() {}

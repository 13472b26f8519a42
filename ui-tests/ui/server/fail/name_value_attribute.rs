use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    /// Adds.
    #[tool = "add"]
    async fn add(&self, a: i64) -> String {
        a.to_string()
    }
}

fn main() {}

use mcp_runtime::server;

struct Calc;

#[server(name = "calc")]
impl Calc {
    /// Adds.
    #[tool]
    async fn add(&self, a: i64) -> String {
        a.to_string()
    }
}

fn main() {}

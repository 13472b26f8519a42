use mcp_runtime::tool;

struct Calc;

impl Calc {
    /// Adds.
    #[tool]
    async fn add(&self, a: i64) -> String {
        a.to_string()
    }
}

fn main() {}

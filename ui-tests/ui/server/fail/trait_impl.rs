use mcp_runtime::server;

trait Calculator {
    async fn add(&self, a: i64) -> String;
}

struct Calc;

#[server]
impl Calculator for Calc {
    /// Adds.
    #[tool]
    async fn add(&self, a: i64) -> String {
        a.to_string()
    }
}

fn main() {}

use mcp_runtime::{Server, server};

struct Calc;

// A method body that does not parse gets rustc's own error, and nothing else: the type
// still implements `Provider`, so `.provider(..)` resolves.
#[server]
impl Calc {
    /// Adds.
    #[tool]
    async fn add(&self, a: i64, b: i64) -> String {
        let sum = a + ;
        sum.to_string()
    }
}

fn main() {
    let _ = Server::builder("x", "1").provider(Calc).build();
}

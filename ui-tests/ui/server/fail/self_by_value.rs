use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    /// Consumes the server.
    #[tool]
    async fn consume(self) -> String {
        String::new()
    }
}

fn main() {}

use mcp_runtime::server;

struct S;

#[server]
impl S {
    /// Echoes.
    #[tool]
    #[prompt]
    async fn echo(&self, text: String) -> String {
        text
    }
}

fn main() {}

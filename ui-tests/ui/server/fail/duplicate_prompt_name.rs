use mcp_runtime::server;

struct Prompts;

#[server]
impl Prompts {
    /// Greets.
    #[prompt]
    async fn greet(&self) -> &'static str {
        "hi"
    }

    /// Also greets.
    #[prompt(name = "greet")]
    async fn hello(&self) -> &'static str {
        "hello"
    }
}

fn main() {}

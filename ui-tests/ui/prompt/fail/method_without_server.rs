use mcp_runtime::prompt;

struct Greeter;

impl Greeter {
    /// Greets.
    #[prompt]
    async fn greet(&self, who: String) -> String {
        who
    }
}

fn main() {}

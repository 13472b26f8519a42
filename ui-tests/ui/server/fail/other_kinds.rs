use mcp_runtime::server;

struct Notes;

#[server]
impl Notes {
    /// A resource taking `&mut self`.
    #[resource("notes://all")]
    async fn all(&mut self) -> String {
        String::new()
    }

    /// A prompt attribute written as `name = value`.
    #[prompt = "p"]
    async fn p(&self) -> String {
        String::new()
    }
}

fn main() {}

use mcp_runtime::server;

struct Counter(u64);

#[server]
impl Counter {
    /// Counts.
    #[tool]
    async fn bump(&mut self) -> String {
        self.0 += 1;
        self.0.to_string()
    }
}

fn main() {}

use mcp_runtime::server;

struct Store<T>(T);

#[server]
impl<T: Send + Sync + 'static> Store<T> {
    /// Reads.
    #[tool]
    async fn read(&self) -> String {
        String::new()
    }
}

fn main() {}

use mcp_runtime::{Server, tool, tools};

fn main() {
    // Tools declared inside a function body resolve like any local item.
    /// A local tool.
    #[tool]
    async fn local(n: u8) -> std::string::String {
        n.to_string()
    }
    Server::builder("t", "1").tools(tools![local]).build().unwrap();
}

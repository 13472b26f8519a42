use mcp_runtime::{Server, tool, tools};

#[doc = include_str!("doc_include.md")]
#[tool]
async fn documented() -> &'static str {
    "ok"
}

fn main() {
    Server::builder("t", "1").tools(tools![documented]).build().unwrap();
}

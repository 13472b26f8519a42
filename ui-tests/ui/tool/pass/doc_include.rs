use mcp_runtime::{Server, tool, tools};

#[doc = include_str!("doc_include.md")]
#[tool]
async fn documented() -> &'static str {
    "ok"
}

/// Mixed: written lines,
#[doc = include_str!("doc_include.md")]
/// and a last line.
#[tool]
async fn mixed() -> &'static str {
    "ok"
}

fn main() {
    Server::builder("t", "1")
        .tools(tools![documented, mixed])
        .build()
        .unwrap();
}

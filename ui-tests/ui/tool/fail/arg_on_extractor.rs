use mcp_runtime::{Context, Server, tool, tools};

/// Tells who is asking.
#[tool]
async fn whoami(#[arg(description = "The request")] cx: Context) -> String {
    cx.request_id().to_string()
}

fn main() {
    let _ = Server::builder("x", "1").tools(tools![whoami]).build();
}

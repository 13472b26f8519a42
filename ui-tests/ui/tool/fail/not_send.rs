use mcp_runtime::{tool, tools};

use std::rc::Rc;

/// Holds an `Rc` across an await.
#[tool]
async fn local() -> String {
    let shared = Rc::new(1);
    tokio::task::yield_now().await;
    shared.to_string()
}

fn main() {
    let _ = tools![local];
}

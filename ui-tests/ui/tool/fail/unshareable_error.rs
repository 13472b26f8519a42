use mcp_runtime::{tool, tools};
use std::error::Error;

/// Fails with a box that is not `Send`.
#[tool]
async fn plain_box() -> Result<String, Box<dyn Error>> {
    Err("no".into())
}

/// Fails with a box that is `Send` but not `Sync`.
#[tool]
async fn send_box() -> Result<String, Box<dyn std::error::Error + Send>> {
    Err(Box::new(std::io::Error::other("no")))
}

/// Fails with a box that is both: fine.
#[tool]
async fn shared_box() -> std::result::Result<String, Box<dyn Error + Send + Sync + 'static>> {
    Err("no".into())
}

fn main() {
    let _ = tools![plain_box, send_box, shared_box];
}

use mcp_runtime::{tool, tools};

/// An error that is no `std::error::Error`, message or box.
#[derive(Debug)]
struct Refused(u16);

/// Refuses with a code.
#[tool]
async fn refuse() -> Result<String, Refused> {
    Err(Refused(7))
}

fn main() {
    let _ = tools![refuse];
}

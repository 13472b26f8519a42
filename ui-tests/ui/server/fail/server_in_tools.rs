use mcp_runtime::{server, tools};

#[derive(Default)]
struct Notes;

#[server]
impl Notes {
    /// Counts the notes.
    #[tool]
    async fn count(&self) -> String {
        "0".into()
    }
}

fn main() {
    let _ = tools![Notes];
}

use mcp_runtime::{Json, Server, server};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Default)]
struct Notes {
    notes: Mutex<BTreeMap<u64, String>>,
}

#[server]
impl Notes {
    /// Adds a note.
    #[tool]
    async fn add(&self, id: u64, text: String) -> String {
        self.notes.lock().unwrap().insert(id, text);
        "ok".into()
    }

    /// One note.
    #[resource("notes://{id}", mime_type = "text/plain")]
    async fn note(&self, id: u64) -> Result<String, mcp_runtime::Error> {
        self.notes.lock().unwrap().get(&id).cloned().ok_or_else(|| mcp_runtime::Error::resource_not_found(format!("notes://{id}")))
    }

    /// All notes.
    #[resource("notes://all")]
    async fn all(&self) -> Json<Vec<u64>> {
        Json(self.notes.lock().unwrap().keys().copied().collect())
    }

    /// Summarizes a note.
    #[prompt(name = "summarize")]
    async fn summarize(&self, id: u64) -> String {
        format!("Summarize note {id}: {:?}", self.notes.lock().unwrap().get(&id))
    }
}

fn main() {
    let server = Server::builder("t", "1").provider(Notes::default()).build().unwrap();
    drop(server);
}

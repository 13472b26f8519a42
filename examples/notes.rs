//! A small notes server: add, list, read, search and delete notes held in memory.
//!
//! Serves stdio by default (point an MCP client at `cargo run --example notes`);
//! `--http 127.0.0.1:8080` serves Streamable HTTP at `http://127.0.0.1:8080/mcp` instead.
//!
//! The tools are methods of `Notes`, so they share its state.

use mcp_runtime::{Error, Json, Progress, Server, server};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Serialize, JsonSchema)]
struct Note {
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
}

/// A line in a listing.
#[derive(Serialize, JsonSchema)]
struct Summary {
    id: u64,
    title: String,
    tags: Vec<String>,
}

#[derive(Default)]
struct Notes {
    next_id: AtomicU64,
    notes: Mutex<BTreeMap<u64, Note>>,
}

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Note>> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[server]
impl Notes {
    /// Saves a new note and returns its id.
    #[tool(annotations(read_only_hint = false, destructive_hint = false))]
    async fn add_note(
        &self,
        #[arg(description = "A short title")] title: String,
        #[arg(description = "The text of the note")] body: String,
        #[arg(description = "Optional tags, for filtering")] tags: Option<Vec<String>>,
    ) -> Result<String, Error> {
        if title.trim().is_empty() {
            return Err(Error::new("the title is empty"));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let note = Note {
            id,
            title,
            body,
            tags: tags.unwrap_or_default(),
        };
        self.lock().insert(id, note);
        Ok(format!("saved note {id}"))
    }

    /// Lists the notes, optionally only those with a tag.
    #[tool(annotations(read_only_hint = true))]
    async fn list_notes(&self, tag: Option<String>) -> Json<Vec<Summary>> {
        let notes = self.lock();
        Json(
            notes
                .values()
                .filter(|n| tag.as_ref().is_none_or(|t| n.tags.contains(t)))
                .map(|n| Summary {
                    id: n.id,
                    title: n.title.clone(),
                    tags: n.tags.clone(),
                })
                .collect(),
        )
    }

    /// Returns one note.
    #[tool(annotations(read_only_hint = true))]
    async fn get_note(&self, id: u64) -> Result<Json<Note>, Error> {
        self.lock()
            .get(&id)
            .cloned()
            .map(Json)
            .ok_or_else(|| Error::new(format!("no note with id {id}")))
    }

    /// Finds notes whose title or text contains the query (case-insensitive), reporting
    /// progress as it goes.
    #[tool(annotations(read_only_hint = true))]
    async fn search_notes(&self, query: String, progress: Progress) -> Json<Vec<Summary>> {
        let notes: Vec<Note> = self.lock().values().cloned().collect();
        let query = query.to_lowercase();
        let total = notes.len() as f64;
        let mut hits = Vec::new();
        for (i, n) in notes.into_iter().enumerate() {
            if n.title.to_lowercase().contains(&query) || n.body.to_lowercase().contains(&query) {
                hits.push(Summary {
                    id: n.id,
                    title: n.title,
                    tags: n.tags,
                });
            }
            progress.report((i + 1) as f64, Some(total), None);
            tokio::task::yield_now().await;
        }
        Json(hits)
    }

    /// Deletes a note for good.
    #[tool(annotations(destructive_hint = true, idempotent_hint = true))]
    async fn delete_note(&self, id: u64) -> Result<String, Error> {
        match self.lock().remove(&id) {
            Some(n) => Ok(format!("deleted note {id} ({})", n.title)),
            None => Err(Error::new(format!("no note with id {id}"))),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_runtime::telemetry::init(); // logs to stderr: stdout carries the protocol
    let server = Server::builder("notes", env!("CARGO_PKG_VERSION"))
        .title("Notes")
        .instructions("Keeps short notes in memory. Use list_notes or search_notes to find ids.")
        .provider(Notes::default())
        .build()?;

    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--http") {
        Some(i) => {
            let addr = args
                .get(i + 1)
                .map(String::as_str)
                .unwrap_or("127.0.0.1:8080");
            server.serve_http(addr).await?;
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}

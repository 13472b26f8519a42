//! A small notes server: add, list, read, search and delete notes.
//!
//! Serves stdio by default (point an MCP client at `cargo run --example notes`);
//! `--http 127.0.0.1:8080` serves Streamable HTTP at `http://127.0.0.1:8080/mcp` instead.
//!
//! Each note lives behind a handle (an opaque, unguessable id the client passes back):
//! in this process by default, or in Redis with `REDIS_URL=redis://...` so that every
//! instance behind a balancer sees the same notes. With authorization on, each caller
//! sees only their own.

use mcp_runtime::store::{HandleError, Handles};
use mcp_runtime::{Error, Json, Progress, Server, tool, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
struct Note {
    title: String,
    body: String,
    tags: Vec<String>,
}

/// A note with its id.
#[derive(Serialize, JsonSchema)]
struct Found {
    id: String,
    #[serde(flatten)]
    note: Note,
}

/// A line in a listing.
#[derive(Serialize, JsonSchema)]
struct Summary {
    id: String,
    title: String,
    tags: Vec<String>,
}

impl Summary {
    fn of(id: String, n: Note) -> Summary {
        Summary {
            id,
            title: n.title,
            tags: n.tags,
        }
    }
}

/// Saves a new note and returns its id.
#[tool(annotations(read_only_hint = false, destructive_hint = false))]
async fn add_note(
    notes: Handles,
    #[arg(description = "A short title")] title: String,
    #[arg(description = "The text of the note")] body: String,
    #[arg(description = "Optional tags, for filtering")] tags: Option<Vec<String>>,
) -> Result<String, Error> {
    if title.trim().is_empty() {
        return Err(Error::new("the title is empty"));
    }
    let note = Note {
        title,
        body,
        tags: tags.unwrap_or_default(),
    };
    let id = notes.mint(&note).await?;
    Ok(format!("saved note {id}"))
}

/// Lists the notes, optionally only those with a tag.
#[tool(annotations(read_only_hint = true))]
async fn list_notes(
    notes: Handles,
    tag: Option<String>,
) -> Result<Json<Vec<Summary>>, HandleError> {
    let all = notes.list::<Note>().await?;
    Ok(Json(
        all.into_iter()
            .filter(|(_, n)| tag.as_ref().is_none_or(|t| n.tags.contains(t)))
            .map(|(id, n)| Summary::of(id, n))
            .collect(),
    ))
}

/// Returns one note.
#[tool(annotations(read_only_hint = true))]
async fn get_note(notes: Handles, id: String) -> Result<Json<Found>, HandleError> {
    let note = notes.get(&id).await?;
    Ok(Json(Found { id, note }))
}

/// Finds notes whose title or text contains the query (case-insensitive), reporting
/// progress as it goes.
#[tool(annotations(read_only_hint = true))]
async fn search_notes(
    notes: Handles,
    query: String,
    progress: Progress,
) -> Result<Json<Vec<Summary>>, HandleError> {
    let all = notes.list::<Note>().await?;
    let query = query.to_lowercase();
    let total = all.len() as f64;
    let mut hits = Vec::new();
    for (i, (id, n)) in all.into_iter().enumerate() {
        if n.title.to_lowercase().contains(&query) || n.body.to_lowercase().contains(&query) {
            hits.push(Summary::of(id, n));
        }
        progress.report((i + 1) as f64, Some(total), None);
        tokio::task::yield_now().await;
    }
    Ok(Json(hits))
}

/// Deletes a note for good.
#[tool(annotations(destructive_hint = true, idempotent_hint = true))]
async fn delete_note(notes: Handles, id: String) -> Result<String, HandleError> {
    let note: Note = notes.get(&id).await?;
    notes.delete(&id).await?;
    Ok(format!("deleted note {id} ({})", note.title))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_runtime::telemetry::init(); // logs to stderr: stdout carries the protocol
    let mut builder = Server::builder("notes", env!("CARGO_PKG_VERSION"))
        .title("Notes")
        .instructions("Keeps short notes. Use list_notes or search_notes to find ids.")
        .tools(tools![
            add_note,
            list_notes,
            get_note,
            search_notes,
            delete_note
        ]);
    if let Ok(url) = std::env::var("REDIS_URL") {
        let redis = mcp_runtime::store::redis::RedisStore::connect(&url).await?;
        builder = builder.handle_store(redis.clone()).notification_bus(redis);
    }
    let server = builder.build()?;

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

//! Every macro under strict lints: what the macros generate must not trip any of them
//! (the user's own code here is written to pass them too).
#![deny(
    warnings,
    unused,
    missing_docs,
    rust_2018_idioms,
    unreachable_pub,
    unused_qualifications,
    trivial_casts
)]

use mcp_runtime::{
    Context, Elicited, Error, Form, Json, Server, prompt, prompts, resource, resources, server,
    tool, tools,
};
use std::sync::atomic::{AtomicU64, Ordering};

/// How the caller signs.
#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Signature {
    /// The caller's name.
    name: String,
}

/// Adds two numbers.
#[tool(annotations(read_only_hint = true))]
async fn add(#[arg(description = "The first term")] a: i64, #[arg(default = 1)] b: i64) -> Json<i64> {
    Json(a + b)
}

/// Greets, asking who is there.
#[tool]
#[needs_input]
async fn greet(#[input(elicit = "Who are you?")] who: Elicited<Signature>, ctx: Context) -> String {
    let _ = ctx;
    match who {
        Elicited::Accept(s) => format!("hello {}", s.name),
        _ => "hello".into(),
    }
}

/// Counts on the blocking pool.
#[tool]
fn blocking(_unused: u32) -> String {
    String::new()
}

/// One note.
#[resource("notes://{id}", mime_type = "text/plain")]
async fn note(id: u64) -> Result<String, Error> {
    Ok(id.to_string())
}

/// Asks for a review.
#[prompt]
async fn review(#[arg(description = "The file")] path: String) -> String {
    format!("Review {path}")
}

/// A counter.
#[derive(Default)]
struct Counter(AtomicU64);

#[server]
impl Counter {
    /// Adds one and returns the count.
    #[tool]
    async fn bump(&self, #[arg(default = 1)] by: u64) -> String {
        (self.0.fetch_add(by, Ordering::Relaxed) + by).to_string()
    }

    /// The count.
    #[resource("counter://value")]
    async fn value(&self) -> String {
        self.0.load(Ordering::Relaxed).to_string()
    }

    /// Resets the count on the blocking pool.
    #[tool]
    fn reset(&self) -> String {
        self.0.store(0, Ordering::Relaxed);
        "0".into()
    }

    /// Asks about the count.
    #[prompt]
    #[needs_input]
    async fn ask(&self, #[input(elicit = "Sign, please")] who: Signature) -> String {
        format!("{}: {}", who.name, self.0.load(Ordering::Relaxed))
    }
}

fn main() {
    let server = Server::builder("strict", "1")
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .tools(tools![add, greet, blocking])
        .resources(resources![note])
        .prompts(prompts![review])
        .provider(Counter::default())
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["add", "blocking", "bump", "greet", "reset"]);
}

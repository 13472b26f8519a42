use mcp_runtime::{Json, KnownArguments, Progress, Server, server};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
struct Counter {
    n: AtomicU64,
}

#[server]
impl Counter {
    /// Adds to the counter.
    #[tool(annotations(idempotent_hint = false))]
    async fn bump(&self, by: Option<u64>, progress: Progress) -> String {
        progress.report(1.0, None, None);
        (self.n.fetch_add(by.unwrap_or(1), Ordering::Relaxed) + 1).to_string()
    }

    /// Reads the counter.
    #[mcp_runtime::tool(name = "read")]
    async fn value(&self) -> Json<u64> {
        Json(self.n.load(Ordering::Relaxed))
    }

    /// A note: its id completes from the server's own state, through a `&self` method.
    #[resource("counter://{id}")]
    async fn note(&self, #[arg(complete = known_ids)] id: u64) -> String {
        format!("{id} of {}", self.n.load(Ordering::Relaxed))
    }

    async fn known_ids(&self, partial: String, _known: KnownArguments) -> Vec<String> {
        let n = self.n.load(Ordering::Relaxed);
        (0..=n).map(|i| i.to_string()).filter(|i| i.starts_with(&partial)).collect()
    }

    /// An associated function without `self` can be a tool too.
    #[tool]
    async fn version() -> &'static str {
        "1"
    }

    // Ordinary methods stay ordinary.
    fn reset(&self) {
        self.n.store(0, Ordering::Relaxed);
    }
}

fn main() {
    let c = Counter::default();
    c.reset();
    let server = Server::builder("t", "1").provider(c).build().unwrap();
    let names = server.tool_names();
    assert_eq!(names, ["bump", "read", "version"]);
}

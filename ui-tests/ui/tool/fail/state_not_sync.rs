use mcp_runtime::{State, tool, tools};
use std::cell::RefCell;

struct Cache {
    seen: RefCell<Vec<String>>,
}

/// Remembers a word.
#[tool]
async fn remember(word: String, cache: State<Cache>) -> String {
    cache.seen.borrow_mut().push(word);
    "ok".into()
}

fn main() {
    let _ = tools![remember];
}

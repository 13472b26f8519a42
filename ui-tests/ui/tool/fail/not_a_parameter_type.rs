use mcp_runtime::{tool, tools};

struct Config;

/// Uses a type that is neither an argument nor an extractor.
#[tool]
async fn configure(config: Config) -> &'static str {
    let _ = config;
    "ok"
}

fn main() {
    let _ = tools![configure];
}

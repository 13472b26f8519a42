use mcp_runtime::{tool, tools};

/// Scores.
#[tool]
async fn score(#[arg(header = "Score")] score: f64) -> String {
    score.to_string()
}

fn main() {
    let _ = tools![score];
}

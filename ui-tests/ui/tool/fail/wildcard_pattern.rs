use mcp_runtime::tool;

/// Ignores its argument.
#[tool]
async fn ignore(_: i64) -> &'static str {
    "ok"
}

fn main() {}

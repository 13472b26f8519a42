use mcp_runtime::{tool, tools};

// One mistake gives exactly one error: the function and its registration still resolve.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn main() {
    let _ = add(1, 2);
    let _ = tools![add];
}

use mcp_runtime::tool;

/// Not a function.
#[tool]
struct Add;

fn main() {}

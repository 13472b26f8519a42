use mcp_runtime::prompt;

/// Not a function.
#[prompt]
struct Greeting;

fn main() {}

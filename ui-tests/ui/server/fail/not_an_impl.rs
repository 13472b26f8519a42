use mcp_runtime::server;

#[server]
struct Calc;

fn main() {}

use mcp_runtime::tool;

/// Reads raw memory.
#[tool]
async unsafe fn peek(addr: u64) -> String {
    addr.to_string()
}

/// Calls C.
#[tool]
extern "C" fn from_c(n: u32) -> String {
    n.to_string()
}

fn main() {}

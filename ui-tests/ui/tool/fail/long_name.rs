use mcp_runtime::tool;

/// Adds.
#[tool(name = "a_tool_name_that_is_far_too_long_for_any_client_to_accept_it_at_all")]
async fn add(a: i64) -> String {
    a.to_string()
}

fn main() {}

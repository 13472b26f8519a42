use mcp_runtime::tool;

/// A `_meta` key whose name is not valid.
#[tool(meta = r#"{"com.example/-team": "x"}"#)]
async fn name(a: i64) -> String {
    a.to_string()
}

/// A `_meta` key whose prefix is not reverse DNS.
#[tool(meta = r#"{"1com.example/team": "x"}"#)]
async fn prefix(a: i64) -> String {
    a.to_string()
}

fn main() {}

use mcp_runtime::Form;

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Pair(String, String);

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
enum Choice {
    A,
    B(String),
}

fn main() {}

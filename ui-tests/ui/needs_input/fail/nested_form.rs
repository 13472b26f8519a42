use mcp_runtime::Form;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Address {
    city: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Profile {
    name: String,
    address: Address,
    tags: Vec<String>,
}

fn main() {}

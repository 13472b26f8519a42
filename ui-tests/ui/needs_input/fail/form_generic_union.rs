use mcp_runtime::Form;

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Wrapped<T> {
    value: T,
}

#[derive(Form)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}

use mcp_runtime::Form;

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Login {
    #[form(crate = "my_runtime")]
    login: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
enum Size {
    #[form(crate = "my_runtime")]
    Small,
    Large,
}

fn main() {}

use mcp_runtime::Form;

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
#[form(rename = "login")]
struct Login {
    login: String,
}

fn main() {}

use mcp_runtime::Form;

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
#[serde(tag = "kind")]
enum Tagged {
    Alpha,
    Beta,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
#[serde(rename_all = "lowercase", untagged)]
enum Untagged {
    Alpha,
    Beta,
}

/// Renamed values stay a choice of strings: no error here.
#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
#[serde(rename_all = "lowercase")]
enum Plain {
    #[serde(rename = "a")]
    Alpha,
    Beta,
}

fn main() {}

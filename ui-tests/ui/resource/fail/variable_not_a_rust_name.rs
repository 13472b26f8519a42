use mcp_runtime::resource;

/// A setting.
#[resource("config://{app.name}/{type}")]
async fn setting() -> String {
    String::new()
}

fn main() {}

/// A keyword that is no `r#` identifier.
#[resource("config://{self}")]
async fn itself() -> String {
    String::new()
}

use mcp_runtime::resource;

/// A setting.
#[resource("config://{app.name}/{type}")]
async fn setting() -> String {
    String::new()
}

fn main() {}

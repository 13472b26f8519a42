use mcp_runtime::{Server, resource, resources};

/// A setting: the parameters the errors for these variables suggest.
#[resource("config://{app.name}/{type}")]
async fn setting(#[arg(name = "app.name")] app_name: String, r#type: String) -> String {
    format!("{app_name} {type}")
}

fn main() {
    let _ = Server::builder("t", "1").resources(resources![setting]).build();
}

/// A keyword that is no `r#` identifier, named as the error says.
#[resource("config://{self}")]
async fn itself(#[arg(name = "self")] self_: String) -> String {
    self_
}

use mcp_runtime::{prompt, resource, tool};

/// Writes a file.
#[tool(scopes("files:write"))]
async fn write(path: String) -> String {
    path
}

/// A file.
#[resource("files:///{name}", scopes("files:read"))]
async fn file(name: String) -> String {
    name
}

/// A review prompt.
#[prompt(scopes = ["review"])]
async fn review(code: String) -> String {
    code
}

fn main() {
    let _ = mcp_runtime::Server::builder("t", "1")
        .tools(mcp_runtime::tools![write])
        .resources(mcp_runtime::resources![file])
        .prompts(mcp_runtime::prompts![review])
        .build()
        .unwrap();
}

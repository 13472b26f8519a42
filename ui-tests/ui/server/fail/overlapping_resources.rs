use mcp_runtime::server;

struct Files;

#[server]
impl Files {
    /// One file.
    #[resource("files://{name}")]
    async fn file(&self, name: String) -> String {
        name
    }

    /// Also one file.
    #[resource("files://{+path}")]
    async fn any(&self, path: String) -> String {
        path
    }
}

fn main() {}

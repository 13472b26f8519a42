use mcp_runtime::{Server, server};

struct Admin;

#[server]
impl Admin {
    /// Always served.
    #[tool]
    async fn status(&self) -> String {
        "ok".into()
    }

    /// Compiled out: neither the method nor its entry exists.
    #[cfg(any())]
    #[tool]
    async fn drop_all(&self) -> String {
        "dropped".into()
    }

    /// One name, two configurations: only one of them is compiled.
    #[cfg(unix)]
    #[tool(name = "path_separator")]
    async fn separator_unix(&self) -> String {
        "/".into()
    }

    /// One name, two configurations: only one of them is compiled.
    #[cfg(not(unix))]
    #[tool(name = "path_separator")]
    async fn separator_other(&self) -> String {
        "\\".into()
    }

    /// A prompt behind a `cfg_attr` that compiles it out.
    #[cfg_attr(all(), cfg(any()))]
    #[prompt]
    async fn hidden(&self) -> String {
        String::new()
    }

    /// The attribute may also come first.
    #[resource("admin://state")]
    #[cfg(any())]
    async fn state(&self) -> String {
        String::new()
    }
}

fn main() {
    let server = Server::builder("t", "1").provider(Admin).build().unwrap();
    assert_eq!(server.tool_names(), ["path_separator", "status"]);
}

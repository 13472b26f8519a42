use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    #[tool]
    async fn undocumented(&self) -> String {
        String::new()
    }

    /// Not async.
    #[tool(name = "x y")]
    fn blocking(&self) -> String {
        String::new()
    }
}

fn main() {}

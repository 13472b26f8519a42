use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    #[tool]
    async fn undocumented(&self) -> String {
        String::new()
    }

    /// A bad name (a plain `fn` is fine: it runs on the blocking pool).
    #[tool(name = "x y")]
    fn blocking(&self) -> String {
        String::new()
    }
}

fn main() {}

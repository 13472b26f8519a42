use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    async fn helper(&self) -> String {
        String::new()
    }
}

fn main() {}

use mcp_runtime::server;

struct Calc;

#[server]
impl Calc {
    /// The item attribute is wrong: its helper attributes still come off.
    #[tool = "add"]
    #[needs_input]
    async fn add(
        &self,
        #[arg(description = "first")] a: i64,
        #[input(roots)] roots: Vec<serde_json::Value>,
    ) -> String {
        let _ = roots;
        a.to_string()
    }
}

fn main() {}

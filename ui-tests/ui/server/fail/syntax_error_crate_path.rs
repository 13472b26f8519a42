// As `syntax_error_in_method`, with the attributes written through the path given by
// `crate = ...`: they are taken off too, so rustc's syntax error is the only error (no
// "method without `#[server]`" from `rt::tool`, no unresolved `rt::arg`).
use mcp_runtime as rt;

struct Calc;

#[rt::server(crate = rt)]
impl Calc {
    /// Adds.
    #[rt::tool]
    #[rt::needs_input]
    async fn add(
        &self,
        #[rt::arg(description = "The first term")] a: i64,
        b: i64,
        #[rt::input(roots)] roots: Vec<serde_json::Value>,
    ) -> String {
        let sum = a + ;
        sum.to_string()
    }
}

fn main() {
    let _ = rt::Server::builder("x", "1").provider(Calc).build();
}

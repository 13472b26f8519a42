use mcp_runtime::{Context, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i32,
}

/// A default the schema cannot show: `Point` is not `Serialize`.
#[tool]
async fn plot(#[arg(default = Point { x: 0 })] at: Point) -> String {
    at.x.to_string()
}

/// `default` on an extractor, which is no argument.
#[tool]
async fn whoami(#[arg(default)] ctx: Context) -> String {
    let _ = ctx;
    String::new()
}

/// `default(..)` is not how a default is written.
#[tool]
async fn count(#[arg(default(3))] n: u32) -> String {
    n.to_string()
}

fn main() {
    let _ = tools![plot, whoami, count];
}

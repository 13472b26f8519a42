use mcp_runtime::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point(i64, i64);

/// Sums a point.
#[tool]
async fn sum(Point(x, y): Point) -> String {
    (x + y).to_string()
}

fn main() {}

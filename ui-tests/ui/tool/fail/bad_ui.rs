use mcp_runtime::tool;

/// Shows the weather.
#[tool(ui = "https://example.com/view.html")]
async fn weather(city: String) -> String {
    city
}

fn main() {}
